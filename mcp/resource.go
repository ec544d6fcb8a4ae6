package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/mcp/internal/rawjson"
)

// ResourceTemplate is the URI template of workdir files. go-sdk's {path*}
// does not match "a/b/c"; {+path} does, and the handler re-parses the URI
// itself rather than trusting the template's variable extraction.
const ResourceTemplate = "serverfs://{workdir}/{+path}"

const resourcePrefix = "serverfs://"

// codeResourceNotFound is the JSON-RPC code of a resource that does not
// exist (-32002), what clients before 2026-07-28 test for; go-sdk
// deprecated its constant for invalid params.
const codeResourceNotFound = -32002

func addResourceTemplate(s *sdk.Server, d *Deps) {
	s.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "workdir-file",
		Title:       "Workdir file",
		Description: "A text file in a workdir, e.g. serverfs://projects/README.md. Only files that fit in one read_text_file window are served this way; use read_text_file for larger files. Files are never listed as resources.",
		URITemplate: ResourceTemplate,
	}, func(ctx context.Context, req *sdk.ReadResourceRequest) (res *sdk.ReadResourceResult, err error) {
		defer func() {
			if r := recover(); r != nil {
				d.Log.Error("resource panic", "event", "panic", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				_, text := errs.Render(nil)
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: text}
			}
		}()
		return readResource(ctx, d, req.Params.URI)
	})
}

// parseResourceURI splits serverfs://alias/rel/path, decoding
// percent-escapes exactly once. The result goes through the same path
// policy as every tool, so "%2e%2e%2f" (../) is refused there, "%252e"
// stays the literal name "%2e", and "%00" is a NUL, refused.
func parseResourceURI(uri string) (alias, path string, err error) {
	rest, ok := strings.CutPrefix(uri, resourcePrefix)
	if !ok {
		return "", "", errs.New(errs.InvalidPath, "resource URIs look like serverfs://<workdir>/<path>")
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		return "", "", errs.New(errs.InvalidPath, "resource URIs take no query or fragment")
	}
	rawAlias, rawPath, _ := strings.Cut(rest, "/")
	if alias, err = url.PathUnescape(rawAlias); err != nil {
		return "", "", errs.New(errs.InvalidPath, "bad percent-escape in the workdir")
	}
	if path, err = url.PathUnescape(rawPath); err != nil {
		return "", "", errs.New(errs.InvalidPath, "bad percent-escape in the path")
	}
	return alias, path, nil
}

func readResource(ctx context.Context, d *Deps, uri string) (*sdk.ReadResourceResult, error) {
	alias, path, err := parseResourceURI(uri)
	if err == nil && compressedPath(path) {
		// As read_text_file: a decompressing read is heavy.
		var release func()
		if release, err = d.admission().Acquire(ctx); err == nil {
			defer release()
		}
	}
	if err == nil {
		var w *readTextFileOut
		w, err = readText(ctx, d, alias, path, sfs.ReadOptions{StartLine: 1, MaxLines: d.FS.Limits().MaxReadLines})
		if err == nil && w.HasMore {
			err = errs.At(errs.ReadLimitExceeded, alias, w.Path, "is larger than one read window; use the read_text_file tool with start_line and max_lines")
		}
		if err == nil {
			d.Log.Info("resource_read", "event", "resource_read", "workdir", rawjson.LogString(alias), "path", rawjson.LogString(path), "bytes_returned", w.BytesReturned, "success", true)
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: sfs.MIMEType(w.Path[strings.LastIndexByte(w.Path, '/')+1:]), Text: w.Content}}}, nil
		}
	}
	code, text := errs.Render(err)
	d.Log.Info("resource_read", "event", "resource_read", "workdir", rawjson.LogString(alias), "path", rawjson.LogString(path), "success", false, "error_code", string(code))
	rpcCode := int64(jsonrpc.CodeInvalidParams)
	if code == errs.PathNotFound || code == errs.WorkdirNotFound {
		rpcCode = codeResourceNotFound
	}
	data, _ := json.Marshal(map[string]string{"uri": uri, "code": string(code)})
	return nil, &jsonrpc.Error{Code: rpcCode, Message: text, Data: data}
}
