package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
)

// Logger writes ServerFS's structured log: one JSON line per tool call.
// It never logs file content, secrets or host paths: only aliases and the
// workdir-relative paths agents sent.
type Logger struct{ *slog.Logger }

// callInfo is what a handler tells the call log.
type callInfo struct {
	workdir, path string
	bytes         int // bytes of content returned; 0: the size of the JSON output
}

// toolError is the one mapping from any error to the text of a tool error
// result: "CODE: alias:/path message" for ServerFS errors, a generic
// INTERNAL_ERROR otherwise (the detail goes to the server log only).
func toolError(err error) (sfs.Code, string) {
	var e *sfs.Error
	if errors.As(err, &e) && e.Code != sfs.CodeInternal {
		return e.Code, e.Error()
	}
	if errors.As(err, &e) && e.Location() != "" {
		return sfs.CodeInternal, fmt.Sprintf("%s: %s failed; the server log has the details", sfs.CodeInternal, e.Location())
	}
	return sfs.CodeInternal, string(sfs.CodeInternal) + ": the request failed; the server log has the details"
}

// instrument wraps a handler: a panic becomes INTERNAL_ERROR (stack in the
// server log only) and the server keeps serving; errors become tool results
// with isError (and no structured content); every call is logged once.
func instrument[In, Out any](d *Deps, name string, fn func(context.Context, *Deps, In) (Out, callInfo, error)) sdk.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, in In) (res *sdk.CallToolResult, out Out, err error) {
		start := time.Now()
		var info callInfo
		defer func() {
			if r := recover(); r != nil {
				d.Log.Error("tool panic", "event", "panic", "tool", name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = &sfs.Error{Code: sfs.CodeInternal, Msg: "panic"}
			}
			code := sfs.Code("")
			if err != nil {
				var text string
				code, text = toolError(err)
				if code == sfs.CodeInternal {
					d.Log.Error("tool failure", "event", "tool_error", "tool", name, "error", err.Error())
				}
				// Returned as an error, go-sdk answers isError with this
				// text and no structuredContent; a result of our own would
				// get the zero Out attached as structured content.
				var zero Out
				out = zero
				res, err = nil, &codedError{text}
			} else if info.bytes == 0 {
				if b, jerr := json.Marshal(out); jerr == nil {
					info.bytes = len(b)
				}
			}
			attrs := []any{"event", "tool_call", "tool", name, "duration_ms", time.Since(start).Milliseconds(), "success", code == ""}
			if info.workdir != "" {
				attrs = append(attrs, "workdir", logString(info.workdir))
			}
			if info.path != "" {
				attrs = append(attrs, "path", logString(info.path))
			}
			if code == "" {
				attrs = append(attrs, "bytes_returned", info.bytes)
			} else {
				attrs = append(attrs, "error_code", string(code))
			}
			d.Log.Info("tool_call", attrs...)
		}()
		if d.testPanic != nil {
			d.testPanic(name)
		}
		out, info, err = fn(ctx, d, in)
		return nil, out, err
	}
}

// logString bounds an agent-supplied string for the log.
func logString(s string) string {
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// codedError is a tool error that instrument mapped and logged.
type codedError struct{ text string }

func (e *codedError) Error() string { return e.text }

// argumentErrors completes the tool errors go-sdk makes itself, before any
// handler runs: arguments refused by the input schema (a bound, a type).
// They get the INVALID_ARGUMENT code and their call-log line.
func argumentErrors(d *Deps) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			start := time.Now()
			res, err := next(ctx, method, req)
			r, ok := res.(*sdk.CallToolResult)
			var ce *codedError
			if err != nil || !ok || !r.IsError || errors.As(r.GetError(), &ce) {
				return res, err
			}
			for _, c := range r.Content {
				if tc, ok := c.(*sdk.TextContent); ok {
					tc.Text = string(sfs.CodeInvalidArgument) + ": " + tc.Text
				}
			}
			name := ""
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok {
				name = p.Name
			}
			d.Log.Info("tool_call", "event", "tool_call", "tool", logString(name), "duration_ms", time.Since(start).Milliseconds(), "success", false, "error_code", string(sfs.CodeInvalidArgument))
			return res, err
		}
	}
}
