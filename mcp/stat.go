package mcp

import (
	"context"
	"fmt"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/mcp/internal/rawjson"
)

type statFileIn struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path"`
}

// statFileTool is stat_file; in rw workdirs (s.write) it gives a file's
// revision too.
func statFileTool(lim sfs.Limits, s surface) tool {
	revision := ""
	if s.write {
		revision = fmt.Sprintf("; in rw workdirs a file's revision (up to %s)", sizeText(lim.MaxWriteBytes))
	}
	return tool{
		def: &sdk.Tool{
			Name:        "stat_file",
			Description: fmt.Sprintf("A file's or directory's type, size, modified_at and MIME type, without reading it%s.", revision),
			Annotations: readOnly("Stat file"),
			InputSchema: inputSchema[statFileIn](nil),
		},
		// A member's stat reads the archive's headers (a tar's whole
		// stream).
		cost:     heavyIf(func(_ *Deps, in statFileIn) bool { return sfs.InArchive(in.Path) }),
		register: register(statFile),
	}
}

func statFile(_ context.Context, d *Deps, in statFileIn) (sfs.FileInfo, callInfo, error) {
	fi, err := d.FS.Stat(in.Workdir, in.Path)
	return fi, callInfo{workdir: in.Workdir, path: in.Path}, err
}

// appendFileInfo appends stat_file's output as json.Marshal writes it
// (same field order, omissions and escaping) without reflection: stat_file
// is the cheapest call and the most frequent one.
func appendFileInfo(b []byte, fi *sfs.FileInfo) []byte {
	b = append(b, `{"workdir":`...)
	b = rawjson.AppendString(b, fi.Workdir)
	b = append(b, `,"path":`...)
	b = rawjson.AppendString(b, fi.Path)
	b = append(b, `,"type":`...)
	b = rawjson.AppendString(b, string(fi.Type))
	if fi.Size != nil {
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, *fi.Size, 10)
	}
	b = append(b, `,"modified_at":`...)
	b = rawjson.AppendString(b, fi.ModifiedAt)
	if fi.MIMEType != "" {
		b = append(b, `,"mime_type":`...)
		b = rawjson.AppendString(b, fi.MIMEType)
	}
	if fi.Revision != "" {
		b = append(b, `,"revision":`...)
		b = rawjson.AppendString(b, fi.Revision)
	}
	return append(b, '}')
}
