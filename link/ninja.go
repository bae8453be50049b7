package link

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload/internal/respfile"
)

// WriteNinja writes the plan as a ninja build file: a build statement for
// each step, its command the step's (goffload's own steps run the program
// of [Options.Goffload]), its inputs and outputs the step's, and the link's
// output the default target. `ninja -f FILE` then runs the link as Run
// does, each step an action that ninja schedules, and reruns only what an
// input's change needs. A command too long for a command line passes its
// arguments in a response file that ninja writes (rspfile), as clang's
// driver would. Paths holding a line break or '|' cannot be written in a ninja file, and are an error.
func (l *Link) WriteNinja(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# goffload link plan: LLVM %d, %s. Run it with ninja -f THIS-FILE.\n", l.LLVM, l.Output)
	fmt.Fprintf(bw, "ninja_required_version = 1.3\n\n")
	fmt.Fprintf(bw, "rule step\n  command = $cmd\n  description = $desc\n\n")
	fmt.Fprintf(bw, "rule step_rsp\n  command = $cmd\n  description = $desc\n  rspfile = $rsp\n  rspfile_content = $rspcontent\n\n")
	for i := range l.Steps {
		s := &l.Steps[i]
		if len(s.Outputs) == 0 {
			return fmt.Errorf("step %d (%s) writes nothing: ninja cannot name it", i, s.Kind)
		}
		outs, err := ninjaPaths(s.Outputs)
		if err != nil {
			return err
		}
		ins, err := ninjaPaths(s.Inputs)
		if err != nil {
			return err
		}
		var env []string
		if len(s.Env) > 0 {
			env = append([]string{"env"}, s.Env...)
		}
		rule, rsp := "step", ""
		cmd := append(append(env, s.Tool), s.Args...)
		if !respfile.Fits(s.Tool, s.Args) && s.Kind != StepFatbinary {
			rule, rsp = "step_rsp", s.Outputs[0]+".rsp"
			cmd = append(append(env, s.Tool), "@"+rsp)
		}
		line, err := shellLine(cmd)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "build %s: %s", outs, rule)
		if ins != "" {
			fmt.Fprintf(bw, " %s", ins)
		}
		fmt.Fprintf(bw, "\n  cmd = %s\n  desc = %s\n", ninjaValue(line), ninjaValue(strings.TrimSpace(string(s.Kind)+" "+s.Target)))
		if rsp != "" {
			var content []string
			for _, a := range s.Args {
				if strings.ContainsAny(a, "\n\r") {
					return fmt.Errorf("step %d (%s): an argument holds a line break: %q", i, s.Kind, a)
				}
				content = append(content, respfile.Quote(a))
			}
			fmt.Fprintf(bw, "  rsp = %s\n  rspcontent = %s\n", ninjaValue(rsp), ninjaValue(strings.Join(content, " ")))
		}
		bw.WriteString("\n")
	}
	out, err := ninjaPaths([]string{l.Output})
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, "default %s\n", out)
	return bw.Flush()
}

// ninjaPaths writes paths for a build line: $, space and colon escaped.
// Ninja has no escape for '|' (it ends a path there: "x|y.o" is the
// explicit input x and the implicit y.o) nor for a line break: a path
// holding one is an error.
func ninjaPaths(paths []string) (string, error) {
	var b strings.Builder
	for i, p := range paths {
		if strings.ContainsAny(p, "\n\r") {
			return "", fmt.Errorf("ninja: a path holds a line break: %q", p)
		}
		if strings.Contains(p, "|") {
			return "", fmt.Errorf("ninja: a path holds '|', which a ninja file cannot express: %q", p)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.NewReplacer("$", "$$", " ", "$ ", ":", "$:").Replace(p))
	}
	return b.String(), nil
}

// ninjaValue escapes a variable's value: $ is $$.
func ninjaValue(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// shellLine quotes a command for /bin/sh, which ninja runs it with.
func shellLine(argv []string) (string, error) {
	var b strings.Builder
	for i, a := range argv {
		if strings.ContainsAny(a, "\n\r") {
			return "", fmt.Errorf("ninja: an argument holds a line break: %q", a)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") == "" {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String(), nil
}
