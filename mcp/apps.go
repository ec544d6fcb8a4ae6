package mcp

import (
	"context"
	"embed"
	"maps"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Apps (the io.modelcontextprotocol/ui extension): a tool whose
// definition names a ui:// resource in _meta.ui.resourceUri has its
// results rendered by that HTML document in a sandboxed iframe of the
// host, fed by the result's structuredContent. The views are built from
// ui/ at the repository root (npm) into mcp/ui/*.html, committed, so that
// go build needs no Node.
//
// Everything here is per session and only for a client that declared the
// extension in its initialize capabilities: any other client sees the
// tools, resources and answers it saw before the views existed.

const (
	appsExtension = "io.modelcontextprotocol/ui"
	appsMIME      = "text/html;profile=mcp-app"
	appsPrefix    = "ui://serverfs/"
)

//go:embed ui/*.html
var appsFS embed.FS

// appView is one view: its resource and the tools whose results it shows.
type appView struct {
	name, title, description string
	tools                    []string
}

var appViews = []appView{
	{"changes", "Change review", "Files changed with status and +/- counts, unified or side-by-side, merge conflicts with ours/base/theirs.",
		[]string{"inspect_repo", "submit_workspace"}},
	{"file", "File view", "A text file's window with line numbers and its position in the file; search hits highlighted, each opened in its file.",
		[]string{"read_text_file", "read_text_files", "search_text"}},
	{"history", "History", "Commits, one commit's files and patch, blame beside the lines.",
		[]string{"read_repo_history"}},
}

func (v appView) uri() string { return appsPrefix + v.name + ".html" }

// viewFor is the URI of the view that shows tool's results, or "".
func viewFor(tool string) string {
	for _, v := range appViews {
		for _, t := range v.tools {
			if t == tool {
				return v.uri()
			}
		}
	}
	return ""
}

// appsSession reports whether req's client declared the extension: at
// initialize, or (2026-07-28) in the request's _meta, which go-sdk records
// as the session's initialize parameters.
func appsSession(req sdk.Request) bool {
	ss, ok := req.GetSession().(*sdk.ServerSession)
	if !ok || ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && appsDeclared(p.Capabilities)
}

// appsDeclared reports whether c holds the extension with the HTML
// profile among its MIME types (what ext-apps' getUiCapability reads).
func appsDeclared(c *sdk.ClientCapabilities) bool {
	if c == nil {
		return false
	}
	ext, ok := c.Extensions[appsExtension].(map[string]any)
	if !ok {
		return false
	}
	types, _ := ext["mimeTypes"].([]any)
	for _, t := range types {
		if t == appsMIME {
			return true
		}
	}
	return false
}

// appsViews is the receiving middleware that adds the views for sessions
// that declared the extension: _meta on the tools that have a view in
// tools/list, the ui:// resources in resources/list, and their reads.
// Tool answers are unchanged: the view reads structuredContent, which
// every client already gets.
func appsViews(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "initialize":
			if r, ok := req.(*sdk.ServerRequest[*sdk.InitializeParams]); ok && r.Params != nil && appsDeclared(r.Params.Capabilities) {
				return withServerExtension(next(ctx, method, req))
			}
			return next(ctx, method, req)
		case "server/discover":
			// The 2026-07-28 revision's discovery: the handler records
			// the capabilities the request's _meta carries as the
			// session's, so they are known once it returns.
			res, err := next(ctx, method, req)
			if appsSession(req) {
				return withServerExtension(res, err)
			}
			return res, err
		case "tools/list", "resources/list", "resources/read":
		default:
			return next(ctx, method, req)
		}
		if !appsSession(req) {
			return next(ctx, method, req)
		}
		if method == "resources/read" {
			if r, ok := req.(*sdk.ReadResourceRequest); ok && r.Params != nil && strings.HasPrefix(r.Params.URI, appsPrefix) {
				return readAppView(r.Params.URI)
			}
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *sdk.ListToolsResult:
			return withToolViews(r), nil
		case *sdk.ListResourcesResult:
			if r.NextCursor == "" {
				cp := *r
				cp.Resources = append(append([]*sdk.Resource(nil), r.Resources...), appResources()...)
				return &cp, nil
			}
		}
		return res, nil
	}
}

// withServerExtension answers an initialize (or server/discover) that
// declared the extension with the extension among the server's
// capabilities too, as extension negotiation has both sides name it. The capabilities are copied: go-sdk
// shares them between sessions.
func withServerExtension(res sdk.Result, err error) (sdk.Result, error) {
	if err != nil {
		return res, err
	}
	add := func(c *sdk.ServerCapabilities) *sdk.ServerCapabilities {
		cp := *c
		cp.Extensions = maps.Clone(c.Extensions)
		cp.AddExtension(appsExtension, nil)
		return &cp
	}
	switch r := res.(type) {
	case *sdk.InitializeResult:
		if r != nil && r.Capabilities != nil {
			cp := *r
			cp.Capabilities = add(r.Capabilities)
			return &cp, nil
		}
	case *sdk.DiscoverResult:
		if r != nil && r.Capabilities != nil {
			cp := *r
			cp.Capabilities = add(r.Capabilities)
			return &cp, nil
		}
	}
	return res, nil
}

// withToolViews is r with _meta.ui.resourceUri (and the Apps SDK's
// openai/outputTemplate, which ChatGPT reads) on each tool that has a
// view. The tools are copied: the server's definitions are shared by
// every session.
func withToolViews(r *sdk.ListToolsResult) *sdk.ListToolsResult {
	cp := *r
	cp.Tools = make([]*sdk.Tool, len(r.Tools))
	for i, t := range r.Tools {
		uri := viewFor(t.Name)
		if uri == "" {
			cp.Tools[i] = t
			continue
		}
		tc := *t
		m := sdk.Meta{}
		for k, v := range t.Meta {
			m[k] = v
		}
		m["ui"] = map[string]any{"resourceUri": uri}
		// The flat key of the extension's first drafts, which hosts of
		// that time read; ext-apps' registerAppTool writes both.
		m["ui/resourceUri"] = uri
		m["openai/outputTemplate"] = uri
		tc.Meta = m
		cp.Tools[i] = &tc
	}
	return &cp
}

// appResourceMeta declares the views' needs: no origin at all, for
// network or resources (everything is inlined), so a host's CSP can
// forbid every fetch; the openai/ keys say the same to ChatGPT.
func appResourceMeta() sdk.Meta {
	return sdk.Meta{
		"ui": map[string]any{
			"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}},
			"prefersBorder": true,
		},
		"openai/widgetCSP":           map[string]any{"connect_domains": []string{}, "resource_domains": []string{}},
		"openai/widgetPrefersBorder": true,
	}
}

func appResources() []*sdk.Resource {
	var rs []*sdk.Resource
	for _, v := range appViews {
		rs = append(rs, &sdk.Resource{
			URI:         v.uri(),
			Name:        "view-" + v.name,
			Title:       v.title,
			Description: v.description,
			MIMEType:    appsMIME,
			Meta:        appResourceMeta(),
		})
	}
	return rs
}

func readAppView(uri string) (*sdk.ReadResourceResult, error) {
	for _, v := range appViews {
		if v.uri() != uri {
			continue
		}
		b, err := appsFS.ReadFile("ui/" + v.name + ".html")
		if err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{
			URI: uri, MIMEType: appsMIME, Text: string(b), Meta: appResourceMeta(),
		}}}, nil
	}
	return nil, sdk.ResourceNotFoundError(uri)
}
