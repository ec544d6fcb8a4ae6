package mcp

import (
	"strconv"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/rawjson"
)

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
