package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/mcp/internal/rawjson"
)

// Logger writes ServerFS's structured log: one JSON line per tool call.
// It never logs file content, secrets or host paths: only aliases and the
// workdir-relative paths agents sent.
type Logger struct {
	*slog.Logger
	// calls, set by NewJSONLogger, takes the tool_call lines encoded
	// directly (calllog.go), byte for byte as the JSON handler encodes
	// them: the one line every call writes, without the handler's state,
	// record and attribute values.
	calls *lineWriter
}

// toolCall writes a call's log line: the same record Info would, built
// from typed attributes (no []any boxing, no caller lookup: the handler
// logs no source) and handed to the handler only when INFO is enabled.
func (l *Logger) toolCall(tool string, d time.Duration, code errs.Code, info callInfo) {
	l.toolCallAt(time.Now(), tool, d, code, info)
}

// toolCallAt is toolCall at time now.
func (l *Logger) toolCallAt(now time.Time, tool string, d time.Duration, code errs.Code, info callInfo) {
	ctx := context.Background()
	h := l.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	if l.calls != nil {
		l.calls.writeToolCall(now, tool, d, code, info)
		return
	}
	var buf [7]slog.Attr
	attrs := append(buf[:0], slog.String("event", "tool_call"), slog.String("tool", tool), slog.Int64("duration_ms", d.Milliseconds()), slog.Bool("success", code == ""))
	if info.workdir != "" {
		attrs = append(attrs, slog.String("workdir", rawjson.LogString(info.workdir)))
	}
	if info.path != "" {
		attrs = append(attrs, slog.String("path", rawjson.LogString(info.path)))
	}
	if code == "" {
		attrs = append(attrs, slog.Int("bytes_returned", info.bytes))
	} else {
		attrs = append(attrs, slog.String("error_code", string(code)))
	}
	r := slog.NewRecord(now, slog.LevelInfo, "tool_call", 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(ctx, r)
}

// callInfo is what a handler tells the call log.
type callInfo struct {
	workdir, path string
	bytes         int // bytes of content returned; 0: the size of the JSON output
}

// instrument wraps a handler into go-sdk's raw tool handler: it decodes
// and checks the arguments (refusals are INVALID_ARGUMENT), a panic becomes
// INTERNAL_ERROR (stack in the server log only) and the server keeps
// serving; errors become tool results with isError and only the text; a
// success carries the output as structuredContent and, as go-sdk's typed
// handlers do, its JSON as one text content (or, for an output with a Text
// method, that text), and for a session with the MCP Apps views the
// output's viewMeta as _meta. With a progressToken, a call that runs long sends
// notifications/progress (progress.go). A heavy call (cost) runs only once
// the admission gate lets it (SERVER_BUSY otherwise). Every call is logged
// once.
func instrument[In, Out any](d *Deps, name string, cost costFn, args *argDecoder[In], fn func(context.Context, *Deps, In) (Out, callInfo, error)) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, _ error) {
		start := time.Now()
		var info callInfo
		var err error
		defer func() {
			if r := recover(); r != nil {
				d.Log.Error("tool panic", "event", "panic", "tool", name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = errs.New(errs.Internal, "panic")
			}
			code := errs.Code("")
			if err != nil {
				var text string
				code, text = errs.Render(err)
				if code == errs.Internal {
					d.Log.Error("tool failure", "event", "tool_error", "tool", name, "error", err.Error())
				}
				res = &sdk.CallToolResult{}
				res.SetError(errors.New(text))
			}
			d.Log.toolCall(name, time.Since(start), code, info)
		}()
		in, notes, err := args.decodeNotes(req.Params.Arguments)
		if err != nil {
			return nil, nil
		}
		if tok := req.Params.GetProgressToken(); tok != nil {
			defer startProgress(ctx, req.Session, tok, name)()
		}
		if cost(d, in) {
			var release func()
			if release, err = d.admission().Acquire(ctx); err != nil {
				return nil, nil
			}
			defer release()
		}
		if d.testHook != nil {
			d.testHook(ctx, name)
		}
		var out Out
		out, info, err = fn(withCaller(ctx, req.Session), d, in)
		if err != nil {
			return nil, nil
		}
		b, err := marshalOutput(out)
		if err != nil {
			return nil, nil
		}
		if info.bytes == 0 {
			info.bytes = len(b)
		}
		b = addNotes(b, notes)
		text := string(b)
		if t, ok := any(out).(texter); ok {
			text = t.Text()
			if len(notes) > 0 && text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			text += noteLines(notes)
		}
		res = &sdk.CallToolResult{StructuredContent: encodedJSON(b), Content: []sdk.Content{&sdk.TextContent{Text: text}}}
		if im, ok := any(out).(imager); ok {
			if c := im.imageContent(); c != nil {
				res.Content = append(res.Content, c)
			}
		}
		if vm, ok := any(out).(viewMetaer); ok && appsSession(req) {
			res.Meta = vm.viewMeta(ctx)
		}
		return res, nil
	}
}

// viewMetaer is an output with data only its MCP Apps view needs (apps.go):
// it goes in the result's _meta, to a session that declared the extension
// only, so the model's answer does not grow.
type viewMetaer interface {
	viewMeta(context.Context) map[string]any
}

// addNotes adds notes (what the server changed in the arguments, such as
// a clamped limit) to the JSON object b as "notes".
func addNotes(b []byte, notes []string) []byte {
	if len(notes) == 0 || len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return b
	}
	nb, err := json.Marshal(notes)
	if err != nil {
		return b
	}
	out := append(make([]byte, 0, len(b)+len(nb)+12), b[:len(b)-1]...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"notes":`...)
	out = append(out, nb...)
	return append(out, '}')
}

// noteLines are notes as the last lines of a text content: "note: ...".
func noteLines(notes []string) string {
	var b strings.Builder
	for _, n := range notes {
		b.WriteString("note: ")
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return b.String()
}

// texter is an output whose text content is its own rendering rather
// than its JSON (list_directory's lines).
type texter interface{ Text() string }

// marshalOutput is the JSON of a tool's output; a nil pointer is the zero
// value of its element type (as go-sdk does), never null.
func marshalOutput[Out any](out Out) ([]byte, error) {
	if fi, ok := any(out).(sfs.FileInfo); ok {
		return appendFileInfo(make([]byte, 0, 256), &fi), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("marshaling output: %w", err)
	}
	if string(b) == "null" {
		if t := reflect.TypeFor[Out](); t.Kind() == reflect.Pointer {
			return json.Marshal(reflect.New(t.Elem()).Interface())
		}
	}
	return b, nil
}

// argErr refuses arguments before the handler runs: INVALID_ARGUMENT,
// mapped by errs.Render like every other error.
func argErr(format string, a ...any) error {
	return errs.New(errs.InvalidArgument, fmt.Sprintf(format, a...))
}

// argDecoder decodes a tool's arguments into In and enforces what its input
// schema declares: no unknown properties, the required ones present, the
// JSON types (through encoding/json), null only where allowed, the
// minimum and maximum of numbers, and the defaults of absent properties.
type argDecoder[In any] struct {
	props    map[string]argProp
	required []string
	// defaults are the schema's default values, applied to absent
	// properties as JSON: copying an In holding defaults would share its
	// pointer fields (*bool), and decoding into a shared pointer writes
	// through it.
	defaults map[string]json.RawMessage
	// defaultsJSON is defaults as one object, decoded into a fresh In
	// before the arguments when every default is a JSON scalar (so that
	// decoding the arguments over it replaces each present property
	// whole, as the merged object would); nil: merge and re-encode.
	defaultsJSON []byte
	// strs are In's string fields by property name: arguments that are
	// all plain strings (the usual workdir and path) are set directly.
	strs map[string]int
	// base is defaultsJSON decoded, when In holds no pointers, maps or
	// slices (a copy then shares nothing): plainStrings starts from it.
	base    In
	hasBase bool
}

type argProp struct {
	nullable bool
	min, max *float64
}

func newArgDecoder[In any](s *jsonschema.Schema) *argDecoder[In] {
	a := &argDecoder[In]{props: map[string]argProp{}, required: s.Required}
	a.defaults = map[string]json.RawMessage{}
	for name, p := range s.Properties {
		a.props[name] = argProp{nullable: slices.Contains(p.Types, "null") || p.Type == "null", min: p.Minimum, max: p.Maximum}
		if p.Default != nil {
			a.defaults[name] = p.Default
		}
	}
	var probe In
	b, err := json.Marshal(a.defaults)
	if err == nil {
		err = json.Unmarshal(b, &probe)
	}
	if err != nil {
		panic(fmt.Sprintf("defaults of %T: %v", probe, err))
	}
	scalar := true
	for _, v := range a.defaults {
		if t := bytes.TrimSpace(v); len(t) == 0 || t[0] == '{' || t[0] == '[' {
			scalar = false
		}
	}
	if scalar {
		a.defaultsJSON = b
		a.strs = map[string]int{}
		t := reflect.TypeFor[In]()
		if flatStruct(t) {
			a.base, a.hasBase = probe, true
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if p, ok := a.props[name]; ok && f.IsExported() && f.Type.Kind() == reflect.String && f.Type.PkgPath() == "" && p.min == nil && p.max == nil {
				a.strs[name] = i
			}
		}
	}
	return a
}

// plainStrings decodes raw when it is an object of plain strings (no
// escapes, printable ASCII), each a distinct string property of In, with
// every required property present: the fields are set directly (over
// the defaults). Anything else is not ok and takes the general path,
// which decodes it the same way or words its error.
func (a *argDecoder[In]) plainStrings(raw json.RawMessage) (In, bool) {
	var in In
	if a.strs == nil || len(raw) == 0 {
		return in, false
	}
	var keys [8]string
	var vals [8]string
	n := 0
	p := rawjson.Scanner{B: raw}
	if !p.Consume('{') {
		return in, false
	}
	for first := true; !p.Consume('}'); first = false {
		if n == len(keys) || !first && !p.Consume(',') {
			return in, false
		}
		k, ok := p.Plain()
		if !ok || !p.Consume(':') {
			return in, false
		}
		v, ok := p.Plain()
		if !ok {
			return in, false
		}
		if _, ok := a.strs[string(k)]; !ok {
			return in, false
		}
		for _, prev := range keys[:n] {
			if prev == string(k) {
				return in, false
			}
		}
		keys[n], vals[n] = string(k), string(v)
		n++
	}
	p.Space()
	if p.I != len(p.B) {
		return in, false
	}
	for _, r := range a.required {
		found := false
		for _, k := range keys[:n] {
			found = found || k == r
		}
		if !found {
			return in, false
		}
	}
	switch {
	case a.hasBase:
		in = a.base
	case len(a.defaults) > 0 && json.Unmarshal(a.defaultsJSON, &in) != nil:
		return in, false
	}
	v := reflect.ValueOf(&in).Elem()
	for i, k := range keys[:n] {
		v.Field(a.strs[k]).SetString(vals[i])
	}
	return in, true
}

// flatStruct reports whether t is a struct of strings, booleans and
// numbers only.
func flatStruct(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		switch t.Field(i).Type.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		default:
			return false
		}
	}
	return true
}

// decodeNotes decodes a call's arguments; it clamps a number above its maximum to the
// maximum instead of refusing it, with a note saying so for the answer.
func (a *argDecoder[In]) decodeNotes(raw json.RawMessage) (In, []string, error) {
	if in, ok := a.plainStrings(raw); ok {
		return in, nil, nil
	}
	in, notes, err := a.decodeAll(raw)
	return in, notes, err
}

func (a *argDecoder[In]) decodeAll(raw json.RawMessage) (in In, notes []string, _ error) {
	var m map[string]json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return in, nil, argErr("validating \"arguments\": %v", err)
		}
	}
	var clamped map[string]float64
	for k, v := range m {
		p, ok := a.props[k]
		if !ok {
			return in, nil, argErr("validating \"arguments\": unexpected additional property %q", k)
		}
		if !p.nullable && string(v) == "null" {
			return in, nil, argErr("validating \"arguments\": property %q: null is not allowed", k)
		}
		if p.min != nil || p.max != nil {
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil && !(errors.Is(err, strconv.ErrRange) && f > 0) {
				return in, nil, argErr("validating \"arguments\": property %q: %s is not a number", k, v)
			}
			if p.min != nil && f < *p.min {
				return in, nil, argErr("validating \"arguments\": property %q: %s is below the minimum %v", k, v, *p.min)
			}
			if p.max != nil && f > *p.max {
				// Every bounded property is a read limit: its maximum
				// gives what the call can, which is what the agent
				// wanted, where a refusal would only cost a retry.
				if clamped == nil {
					clamped = map[string]float64{}
				}
				clamped[k] = *p.max
			}
		}
	}
	if len(clamped) > 0 {
		for _, k := range slices.Sorted(maps.Keys(clamped)) {
			m[k] = json.RawMessage(strconv.FormatFloat(clamped[k], 'f', -1, 64))
			notes = append(notes, k+" clamped to "+strconv.FormatFloat(clamped[k], 'f', -1, 64))
		}
		var err error
		if raw, err = json.Marshal(m); err != nil {
			return in, nil, argErr("%v", err)
		}
	}
	for _, r := range a.required {
		if _, ok := m[r]; !ok {
			return in, nil, argErr("validating \"arguments\": missing required property %q", r)
		}
	}
	if len(m) == 0 && len(a.defaults) == 0 {
		return in, notes, nil
	}
	if a.defaultsJSON != nil {
		// The arguments decoded over the defaults: each present property
		// replaces its default whole, as in the merged object.
		if len(a.defaults) == 0 || json.Unmarshal(a.defaultsJSON, &in) == nil {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if len(m) == 0 || dec.Decode(&in) == nil {
				return in, notes, nil
			}
		}
		// A type error: the merged decode below words it as before
		// (first offending property in name order).
		in = *new(In)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	for k, v := range a.defaults {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	merged, err := json.Marshal(m)
	if err != nil {
		return in, nil, argErr("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(merged))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, nil, argErr("%s", describeDecodeError(err))
	}
	return in, notes, nil
}

// describeDecodeError words a JSON decoding error for an agent, in terms
// of the tool's property names and JSON types rather than Go's.
func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		want := map[reflect.Kind]string{reflect.String: "a string", reflect.Bool: "true or false", reflect.Pointer: "true or false", reflect.Slice: "an array", reflect.Struct: "an object"}[te.Type.Kind()]
		if want == "" {
			want = "a whole number"
		}
		return fmt.Sprintf("validating \"arguments\": property %q must be %s, not %s", te.Field, want, te.Value)
	}
	return "validating \"arguments\": " + err.Error()
}
