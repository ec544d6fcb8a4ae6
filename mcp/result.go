package mcp

import (
	"context"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/mcp/internal/rawjson"
)

// Tool results leave the server as go-sdk marshals a *sdk.CallToolResult:
// CallToolResult.MarshalJSON runs json.Marshal over a wire struct, each
// TextContent marshals itself with json.Marshal once more, and
// encoding/json compacts (re-scans byte by byte) the output of every
// MarshalJSON at every level. A read_text_file answer's text is so
// escaped once and scanned three more times, its structured content
// (the same JSON) scanned twice: about a third of that call's CPU
// (bench/mcp/INVESTIGATION.md).
//
// encodeResults, a receiving middleware, hands go-sdk instead an
// encodedResult for the results instrument builds (one text content
// without _meta or annotations, structured content as encodedJSON, which
// is already json.Marshal's output): it is the same *sdk.CallToolResult,
// so go-sdk still marks it complete and adds its serverInfo on
// 2026-07-28 requests (through the promoted methods), but it marshals
// itself: go-sdk's own MarshalJSON for everything but the content, which
// is spliced in as TextContent.MarshalJSON and the compaction would
// have written it. encoding/json then compacts the whole once, as it
// compacts any MarshalJSON output. Over stdio even that scan goes: the
// transport (rawjson.Splicer, in the request's context) holds the
// content, encoding/json compacts an envelope with a token in its place,
// and the transport writes the content there. The bytes are the same
// (TestEncodedResultMatches, TestEncodedResultsOnTheWire,
// transport.TestStdioSplicesHeldContent).

// encodedJSON is structured content that is json.Marshal output: compact,
// HTML-escaped, valid UTF-8 (so compacting it changes nothing).
type encodedJSON []byte

// MarshalJSON returns m, as json.RawMessage does.
func (m encodedJSON) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	return m, nil
}

// encodedResult is a tool result that marshals its content itself.
// With a splicer (the stdio transport, rawjson.Splicer) it hands the
// content to the transport and writes only a token in its place, so that
// encoding/json does not scan it either.
type encodedResult struct {
	*sdk.CallToolResult
	splicer rawjson.Splicer
}

// encodeResults wraps the results of tools/call that encodedResult can
// marshal; every other result passes as it is.
func encodeResults(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" || err != nil {
			return res, err
		}
		if r, ok := res.(*sdk.CallToolResult); ok && r != nil {
			if _, _, ok := splicedContent(r); ok {
				return &encodedResult{r, rawjson.SplicerFrom(ctx)}, nil
			}
		}
		return res, err
	}
}

// splicedContent is r's one text content and its structured content when
// encodedResult can write them.
func splicedContent(r *sdk.CallToolResult) (*sdk.TextContent, encodedJSON, bool) {
	if len(r.Content) != 1 {
		return nil, nil, false
	}
	tc, ok := r.Content[0].(*sdk.TextContent)
	if !ok || tc == nil || tc.Meta != nil || tc.Annotations != nil {
		return nil, nil, false
	}
	if r.StructuredContent == nil {
		return tc, nil, true
	}
	sc, ok := r.StructuredContent.(encodedJSON)
	return tc, sc, ok
}

// MarshalJSON writes what (*sdk.CallToolResult).MarshalJSON writes.
func (r *encodedResult) MarshalJSON() ([]byte, error) {
	x := r.CallToolResult
	tc, sc, ok := splicedContent(x)
	if !ok {
		return x.MarshalJSON()
	}
	// The envelope: _meta, isError, resultType and the rest as go-sdk
	// writes them, with "content":null where the content goes.
	env := *x
	env.Content, env.StructuredContent = nil, nil
	eb, err := env.MarshalJSON()
	if err != nil {
		return nil, err
	}
	start, end, ok := rawjson.MemberValue(eb, "content")
	if !ok || string(eb[start:end]) != "null" {
		return x.MarshalJSON()
	}
	// What goes in place of the null: the content and the structured
	// content member (after the envelope's head unless spliced).
	var b []byte
	if r.splicer == nil {
		b = append(make([]byte, 0, len(eb)+len(tc.Text)+len(tc.Text)/8+len(sc)+64), eb[:start]...)
	} else {
		b = make([]byte, 0, len(tc.Text)+len(tc.Text)/8+len(sc)+64)
	}
	b = append(b, `[{"type":"text","text":`...)
	b = rawjson.AppendString(b, tc.Text)
	b = append(b, "}]"...)
	if x.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		if sc == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, sc...)
		}
	}
	if r.splicer == nil {
		return append(b, eb[end:]...), nil
	}
	tok, ok := r.splicer.Hold(b)
	if ok {
		b = strconv.AppendInt(nil, tok, 10)
	}
	out := make([]byte, 0, len(eb)+len(b))
	return append(append(append(out, eb[:start]...), b...), eb[end:]...), nil
}
