package mcp

import (
	"context"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/bridge/wire"
)

// run_granted_command: served only when the bridge said at
// startup that it pins grant keys. The server checks nothing of the
// grant: the bridge verifies it, runs it and logs it.

type runGrantedCommandIn struct {
	Workdir string `json:"workdir" jsonschema:"the workdir the grant names"`
	Grant   string `json:"grant" jsonschema:"the token exactly as given (JSON, at most 8 KiB)"`
}

// runGrantedCommandOut is what ran and how it ended.
type runGrantedCommandOut struct {
	GrantID         string   `json:"grant_id"`
	Argv            []string `json:"argv" jsonschema:"the command that ran, exactly as signed"`
	Uses            int      `json:"uses" jsonschema:"how many times this grant has run now, this run included"`
	MaxUses         int      `json:"max_uses"`
	ExitCode        int      `json:"exit_code" jsonschema:"the exit status (non-zero is a result, not an error)"`
	Stdout          string   `json:"stdout,omitempty"`
	Stderr          string   `json:"stderr,omitempty"`
	StdoutTruncated bool     `json:"stdout_truncated,omitempty"`
	StderrTruncated bool     `json:"stderr_truncated,omitempty"`
	DurationMs      int64    `json:"duration_ms"`
	Sandbox         string   `json:"sandbox" jsonschema:"enforced, partial or unavailable: the sandbox level the command ran under"`
	SandboxControls []string `json:"sandbox_controls,omitempty" jsonschema:"the controls in force, e.g. landlock-fs"`
}

func grantTool() tool {
	return tool{
		def: &sdk.Tool{
			Name: "run_granted_command",
			Description: "Run the one command an administrator signed for you: a grant, the token from serverfs grant sign on the host, for an exact argv, one workdir, a few minutes (at most 10) and usually one use. " +
				"Pass it unchanged with the workdir it names; you cannot change the program, its arguments or where it runs. Without a grant nothing runs: say which argv, in which workdir and why, and ask the administrator to sign it. " +
				"A refusal is a GRANT_* code and nothing ran: GRANT_EXPIRED (ask for a new one), GRANT_REPLAY (used up), GRANT_WRONG_WORKDIR, GRANT_CONSTRAINT_VIOLATION (writes, network or a directory the bridge does not allow). " +
				"It runs like a named action: no shell, an allowlisted environment, a timeout, an output cap, the sandbox, never beside writes or commits on the workdir. Answers the argv, exit code, output ends, uses and max_uses, duration and sandbox level.",
			Annotations: &sdk.ToolAnnotations{Title: "Run granted command", ReadOnlyHint: false, IdempotentHint: false, DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
			InputSchema: inputSchema[runGrantedCommandIn](nil),
		},
		cost:     cheap,
		register: register(runGrantedCommand),
	}
}

func runGrantedCommand(ctx context.Context, d *Deps, in runGrantedCommandIn) (*runGrantedCommandOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir}
	if _, err := repoWorkdir(d, in.Workdir, true); err != nil {
		return nil, info, err
	}
	if in.Grant == "" {
		return nil, info, argErr("grant is empty: pass the token the administrator gave you")
	}
	res, err := d.Bridge.RunGrant(ctx, in.Workdir, in.Grant)
	if err != nil {
		return nil, info, err
	}
	return grantOut(res), info, nil
}

func grantOut(r *wire.GrantResult) *runGrantedCommandOut {
	return &runGrantedCommandOut{GrantID: r.GrantID, Argv: r.Argv, Uses: r.Uses, MaxUses: r.MaxUses, ExitCode: r.ExitCode,
		Stdout: r.Stdout, Stderr: r.Stderr, StdoutTruncated: r.StdoutTruncated, StderrTruncated: r.StderrTruncated,
		DurationMs: r.DurationMs, Sandbox: r.Sandbox, SandboxControls: r.SandboxControls}
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
