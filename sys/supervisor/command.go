package supervisor

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

const commandUsage = "usage: services [start|stop|restart NAME]"

// Command is the shell's `services` command. With no arguments it prints
// a table of every service (NAME STATE RESTARTS UPTIME LAST-ERROR; UPTIME
// is how long a running or listening service has been up); "start NAME",
// "stop NAME" and "restart NAME" act on one service. An unknown command
// or service name is an error.
func (s *Supervisor) Command(w io.Writer, args []string) error {
	if len(args) == 0 {
		return s.writeTable(w)
	}
	if len(args) != 2 {
		return errors.New(commandUsage)
	}
	var act func(string) error
	switch args[0] {
	case "start":
		act = s.StartService
	case "stop":
		act = s.StopService
	case "restart":
		act = s.RestartService
	default:
		return fmt.Errorf("services: unknown command %q; %s", args[0], commandUsage)
	}
	if err := act(args[1]); err != nil {
		return err
	}
	for _, st := range s.Status() {
		if st.Name == args[1] {
			_, err := fmt.Fprintf(w, "%s: %s\n", st.Name, st.State)
			return err
		}
	}
	return nil
}

func (s *Supervisor) writeTable(w io.Writer) error {
	now := s.now()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tRESTARTS\tUPTIME\tLAST-ERROR")
	for _, st := range s.Status() {
		up := "-"
		if st.State == StateRunning || st.State == StateListening {
			up = now.Sub(st.Since).Truncate(time.Second).String()
		}
		lastErr := st.LastErr
		if lastErr == "" {
			lastErr = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", st.Name, st.State, st.Restarts, up, lastErr)
	}
	return tw.Flush()
}
