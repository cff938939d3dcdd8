package hwsim

import (
	"fmt"
	"math/rand/v2"
)

// Agent is one unit of a model's autonomous work: a DMA engine fetching the
// next descriptor, a MAC moving a frame, a write buffer draining. It runs
// with the System lock held and reports whether it did anything.
type Agent func() (progress bool)

type agent struct {
	name string
	step Agent
}

// Sched decides, from its seed, when models' agents run relative to the
// driver. Every driver access through the System is a scheduling point.
type Sched struct {
	sys    *System
	rng    *rand.Rand
	agents []agent
	points uint64
	steps  uint64
	inStep bool
}

func newSched(s *System, seed uint64) *Sched {
	return &Sched{sys: s, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// AddAgent registers a model's agent. Register agents before the driver
// starts; the order of registration is part of the deterministic schedule.
func (s *Sched) AddAgent(name string, step Agent) {
	s.sys.mu.Lock()
	defer s.sys.mu.Unlock()
	s.agents = append(s.agents, agent{name: name, step: step})
}

// Intn returns a seeded random number in [0,n) for model decisions that
// must be reproducible (which frame to drop, when a link flaps). Lock held.
func (s *Sched) Intn(n int) int { return s.rng.IntN(n) }

// Chance returns true with probability num/256, seeded. Lock held.
func (s *Sched) Chance(num int) bool { return s.rng.IntN(256) < num }

// point is called (lock held) at every driver access: depending on the
// seed it runs some agents one or more steps, and may evict a dirty line.
func (s *Sched) point() {
	s.points++
	if s.inStep {
		return // an agent's own memory accesses are not points
	}
	if !s.sys.cfg.NoEviction && s.rng.IntN(256) < 16 {
		s.sys.Mem.evictOne()
	}
	if len(s.agents) == 0 || s.rng.IntN(256) >= s.sys.cfg.AgentRate {
		return
	}
	a := s.agents[s.rng.IntN(len(s.agents))]
	n := 1 + s.rng.IntN(3)
	s.inStep = true
	for i := 0; i < n; i++ {
		s.steps++
		if !a.step() {
			break
		}
	}
	s.inStep = false
}

// Settle runs every agent until none makes progress or max rounds pass,
// modelling the hardware getting on with its work while the driver waits.
// It takes the lock; it returns the number of rounds that made progress.
func (s *Sched) Settle(max int) int {
	s.sys.mu.Lock()
	defer s.sys.mu.Unlock()
	return s.settle(max)
}

func (s *Sched) settle(max int) int {
	s.sys.Bus.drainAll()
	rounds := 0
	s.inStep = true
	defer func() { s.inStep = false }()
	for ; rounds < max; rounds++ {
		progress := false
		for _, a := range s.agents {
			s.steps++
			if a.step() {
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	return rounds
}

// Stats returns how many scheduling points and agent steps have happened.
func (s *Sched) Stats() (points, steps uint64) {
	s.sys.mu.Lock()
	defer s.sys.mu.Unlock()
	return s.points, s.steps
}

// Explore runs f for seeds first..first+n-1 and returns the first error,
// annotated with the seed that reproduces it. f builds a fresh System from
// the seed it is given.
func Explore(first uint64, n int, f func(seed uint64) error) error {
	for i := 0; i < n; i++ {
		seed := first + uint64(i)
		if err := f(seed); err != nil {
			return fmt.Errorf("seed %d: %w", seed, err)
		}
	}
	return nil
}
