package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// Control characters the line editor handles (ASCII; the usual termios
// defaults VINTR, VEOF, VKILL, VERASE).
const (
	keyIntr   = 0x03 // ^C
	keyEOF    = 0x04 // ^D
	keyBS     = 0x08 // ^H
	keyKill   = 0x15 // ^U
	keyEsc    = 0x1b
	keyDEL    = 0x7f
	keyBell   = 0x07
	inputSize = 256 // bytes per read of the input pump
)

var errInterrupted = errors.New("interrupted")

// terminal pumps a Session's input in a goroutine so that ^C can cancel a
// running command while the command itself may read input too. The pump
// lives as long as In delivers; it is kept in the Session so a later
// Interactive call on the same Session continues where this one stopped.
type terminal struct {
	chunks chan []byte
	done   chan struct{} // closed by Session.Close: the pump stops delivering
	err    error         // after chunks is closed

	mu     sync.Mutex
	cancel context.CancelFunc // of the running command; nil at the prompt

	pending []byte
	plain   bool
	out     io.Writer // raw output
	lastCR  bool      // the previous line ended with CR: swallow one LF
}

func newTerminal(in io.Reader) *terminal {
	t := &terminal{chunks: make(chan []byte, 4), done: make(chan struct{})}
	go t.pump(in)
	return t
}

func (t *terminal) pump(in io.Reader) {
	for {
		buf := make([]byte, inputSize)
		n, err := in.Read(buf)
		if n > 0 {
			b := buf[:n]
			t.mu.Lock()
			if t.cancel != nil {
				// A command runs: ^C interrupts it and is not input.
				if i := indexByte(b, keyIntr); i >= 0 {
					t.cancel()
					b = append(b[:i:i], b[i+1:]...)
				}
			}
			t.mu.Unlock()
			if len(b) > 0 {
				select {
				case t.chunks <- b:
				case <-t.done:
					return
				}
			}
		}
		if err != nil {
			t.err = err
			close(t.chunks)
			return
		}
	}
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func (t *terminal) setCancel(c context.CancelFunc) {
	t.mu.Lock()
	t.cancel = c
	t.mu.Unlock()
}

// readByte returns the next input byte; io.EOF (or In's error) at the end.
func (t *terminal) readByte(ctx context.Context) (byte, error) {
	for len(t.pending) == 0 {
		select {
		case b, ok := <-t.chunks:
			if !ok {
				if t.err == nil || t.err == io.EOF {
					return 0, io.EOF
				}
				return 0, t.err
			}
			t.pending = b
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	b := t.pending[0]
	t.pending = t.pending[1:]
	return b, nil
}

func (t *terminal) write(s string) {
	if !t.plain {
		io.WriteString(t.out, s)
	}
}

// readLine reads one edited line. echo=false reads a secret (still edited).
// It returns errInterrupted on ^C and io.EOF on ^D at an empty line or at
// the end of input (a last line without newline is returned first).
func (t *terminal) readLine(ctx context.Context, echo bool) (string, error) {
	var line []byte
	show := func(s string) {
		if echo {
			t.write(s)
		}
	}
	for {
		c, err := t.readByte(ctx)
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				return string(line), nil
			}
			return "", err
		}
		if t.lastCR {
			t.lastCR = false
			if c == '\n' { // CR LF is one line end
				continue
			}
		}
		switch c {
		case '\r', '\n':
			t.lastCR = c == '\r'
			t.write("\r\n")
			return string(line), nil
		case keyIntr:
			t.write("^C\r\n")
			return "", errInterrupted
		case keyEOF:
			if len(line) == 0 {
				return "", io.EOF
			}
		case keyBS, keyDEL:
			if len(line) > 0 {
				_, n := utf8.DecodeLastRune(line)
				line = line[:len(line)-n]
				show("\b \b")
			}
		case keyKill:
			for range utf8.RuneCount(line) {
				show("\b \b")
			}
			line = line[:0]
		case keyEsc:
			// Arrow and function keys: ESC [ params final, or ESC O x;
			// no history or cursor motion, so swallow the sequence.
			if err := t.skipEscape(ctx); err != nil {
				return "", err
			}
		case '\t':
			c = ' '
			fallthrough
		default:
			if c < 0x20 {
				continue
			}
			if len(line) >= MaxLine {
				t.write(string(rune(keyBell)))
				continue
			}
			line = append(line, c)
			if echo {
				t.write(string([]byte{c}))
			}
		}
	}
}

// skipEscape consumes the rest of an ECMA-48 escape sequence (5.4: CSI
// parameters 0x30-0x3f, intermediates 0x20-0x2f, final 0x40-0x7e).
func (t *terminal) skipEscape(ctx context.Context) error {
	c, err := t.readByte(ctx)
	if err != nil {
		return err
	}
	switch c {
	case '[':
		for {
			c, err := t.readByte(ctx)
			if err != nil {
				return err
			}
			if c >= 0x40 && c <= 0x7e {
				return nil
			}
		}
	case 'O': // SS3: one more byte
		_, err := t.readByte(ctx)
		return err
	}
	return nil
}

// cookedReader is what a command running under Interactive reads: whole
// edited lines ending in '\n', io.EOF at ^D, like a tty in canonical mode.
type cookedReader struct {
	t    *terminal
	ctx  context.Context
	echo bool
	buf  []byte
	eof  bool
}

func (r *cookedReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if r.eof {
			return 0, io.EOF
		}
		line, err := r.t.readLine(r.ctx, r.echo)
		if err == errInterrupted {
			return 0, context.Canceled
		}
		if err != nil {
			r.eof = true
			return 0, err
		}
		r.buf = append([]byte(line), '\n')
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// crlfWriter writes "\r\n" for each "\n" (a raw terminal does no output
// processing: ONLCR is off).
type crlfWriter struct{ w io.Writer }

// NewCRLFWriter returns a writer for a raw terminal: each LF becomes CR LF.
func NewCRLFWriter(w io.Writer) io.Writer { return &crlfWriter{w} }

func (c *crlfWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		i := indexByte(p, '\n')
		if i < 0 {
			n, err := c.w.Write(p)
			return written + n, err
		}
		if i > 0 {
			n, err := c.w.Write(p[:i])
			written += n
			if err != nil {
				return written, err
			}
		}
		if _, err := c.w.Write([]byte("\r\n")); err != nil {
			return written, err
		}
		written++
		p = p[i+1:]
	}
	return written, nil
}

// Close stops the input goroutine of Interactive/ExecTerminal once In's
// pending Read returns (close In as well). Call it when the session ends
// for good, as sshd does for each channel; the serial console never needs to.
func (s *Session) Close() {
	if s.term != nil && !s.closed {
		s.closed = true
		close(s.term.done)
	}
}

// Interactive reads, edits and runs lines until `exit`, ^D on an empty
// line, the end of input or ctx. It returns nil on exit/^D/EOF.
//
// Input is read by a goroutine that lives until In returns an error; it
// is kept in s, so call Interactive again with the same *Session (not a
// new one over the same In) or input read ahead would be lost.
func (sh *Shell) Interactive(ctx context.Context, s *Session, prompt string) error {
	if s.term == nil {
		s.term = newTerminal(s.In)
	}
	t := s.term
	t.plain = s.Plain
	t.out = s.Out
	cmdSession := *s
	cmdSession.term = nil
	if !s.Plain {
		cmdSession.Out = NewCRLFWriter(s.Out)
	}
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t.write(prompt)
		line, err := t.readLine(ctx, true)
		switch {
		case err == errInterrupted:
			continue
		case err == io.EOF:
			if !s.Plain {
				t.write("exit\r\n")
			}
			return nil
		case err != nil:
			return err
		}
		if _, exit := sh.runTerminalLine(ctx, t, &cmdSession, line); exit {
			return nil
		}
	}
}

// runTerminalLine runs line with cooked input from t; ^C cancels it.
func (sh *Shell) runTerminalLine(ctx context.Context, t *terminal, cmdSession *Session, line string) (int, bool) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmdSession.In = &cookedReader{t: t, ctx: cctx, echo: true}
	t.setCancel(cancel)
	defer t.setCancel(nil)
	return sh.exec(cctx, cmdSession, line)
}

// ExecTerminal is Exec for a line that runs on a raw terminal (ssh -t
// router 'ping host'): output with CR LF, input read as edited lines, ^C
// interrupts. It gives the status like Exec.
func (sh *Shell) ExecTerminal(ctx context.Context, s *Session, line string) int {
	if s.term == nil {
		s.term = newTerminal(s.In)
	}
	t := s.term
	t.plain, t.out = false, s.Out
	cmdSession := *s
	cmdSession.term = nil
	cmdSession.Out = NewCRLFWriter(s.Out)
	status, _ := sh.runTerminalLine(ctx, t, &cmdSession, line)
	return status
}

// readSecret reads one line without echo: edited on a terminal under
// Interactive, else raw bytes up to '\n' (CR stripped), read one at a
// time so nothing after the line is consumed.
func readSecret(s *Session, prompt string) (string, error) {
	fmt.Fprint(s.Out, prompt)
	if r, ok := s.In.(*cookedReader); ok {
		line, err := r.t.readLine(r.ctx, false)
		if err == errInterrupted {
			return "", context.Canceled
		}
		return line, err
	}
	var line []byte
	var b [1]byte
	for {
		n, err := s.In.Read(b[:])
		if n == 1 {
			if b[0] == '\n' && s.lastCR && len(line) == 0 {
				s.lastCR = false // the LF of a CR LF that ended the previous line
				continue
			}
			s.lastCR = b[0] == '\r'
			if b[0] == '\n' || b[0] == '\r' {
				break
			}
			if len(line) >= MaxLine {
				return "", ErrLineTooLong
			}
			line = append(line, b[0])
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				break
			}
			return "", err
		}
	}
	fmt.Fprintln(s.Out)
	return string(line), nil
}
