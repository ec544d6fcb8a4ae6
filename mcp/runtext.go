package mcp

import (
	"strconv"
	"strings"
)

// The text of a command's answer: what ran and how it ended on one line,
// then its output as the program wrote it (a log read escaped inside a
// JSON string is a log a model misreads).

// writeRun writes "exit N in D ms, sandbox S (controls)" and the output
// blocks, each under a "--- stdout ---" or "--- stderr ---" line, with a
// line when the program wrote more than the answer keeps.
func writeRun(b *strings.Builder, exit int, durationMs int64, sandbox string, controls []string, stdout, stderr string, stdoutCut, stderrCut bool) {
	b.WriteString("exit ")
	b.WriteString(strconv.Itoa(exit))
	b.WriteString(" in ")
	b.WriteString(strconv.FormatInt(durationMs, 10))
	b.WriteString(" ms")
	if sandbox != "" {
		b.WriteString(", sandbox ")
		b.WriteString(sandbox)
		if len(controls) > 0 {
			b.WriteString(" (" + strings.Join(controls, ", ") + ")")
		}
	}
	b.WriteByte('\n')
	for _, o := range []struct {
		name, text string
		cut        bool
	}{{"stdout", stdout, stdoutCut}, {"stderr", stderr, stderrCut}} {
		if o.text == "" && !o.cut {
			continue
		}
		b.WriteString("--- " + o.name)
		if o.cut {
			b.WriteString(" (its end only: the program wrote more)")
		}
		b.WriteString(" ---\n")
		b.WriteString(o.text)
		if o.text != "" && !strings.HasSuffix(o.text, "\n") {
			b.WriteByte('\n')
		}
	}
}

// Text is "action NAME: exit N in D ms, sandbox S" and the output; for a
// release action, the tag, commit, status and push output.
func (o *runRepoActionOut) Text() string {
	var b strings.Builder
	b.WriteString("action " + o.Action + ": ")
	if r := o.Release; r != nil {
		b.WriteString(r.Kind + " " + r.Tag + " at " + r.Commit + " of " + r.Repository + ": " + r.Status + " in " + strconv.FormatInt(r.DurationMs, 10) + " ms\n")
		if d := r.Dispatch; d != nil {
			if d.RunURL != "" {
				b.WriteString("workflow run: " + d.RunURL + "\n")
			}
		}
		if r.PushOutput != "" {
			b.WriteString("--- git push ---\n" + r.PushOutput)
			if !strings.HasSuffix(r.PushOutput, "\n") {
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	exit := 0
	if o.ExitCode != nil {
		exit = *o.ExitCode
	}
	writeRun(&b, exit, o.DurationMs, o.Sandbox, o.SandboxControls, o.Stdout, o.Stderr, o.StdoutTruncated, o.StderrTruncated)
	return b.String()
}

// Text is "grant ID (use U of M): argv", then how it ended and the output.
func (o *runGrantedCommandOut) Text() string {
	var b strings.Builder
	b.WriteString("grant " + o.GrantID + " (use " + strconv.Itoa(o.Uses) + " of " + strconv.Itoa(o.MaxUses) + "): ")
	for i, a := range o.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		b.WriteString(a)
	}
	b.WriteString("\n")
	writeRun(&b, o.ExitCode, o.DurationMs, o.Sandbox, o.SandboxControls, o.Stdout, o.Stderr, o.StdoutTruncated, o.StderrTruncated)
	return b.String()
}
