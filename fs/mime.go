package fs

import (
	"path"
	"strings"
)

// FallbackMIMEType is the answer for every file whose extension is not in
// the table.
const FallbackMIMEType = "application/octet-stream"

// mimeTypes is ServerFS's own fixed table. Go's mime package is not used:
// it merges /etc/mime.types and friends at run time, so the same file would
// get a different answer on a host, in a scratch image and in CI.
var mimeTypes = map[string]string{
	".txt": "text/plain", ".log": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown",
	".rst": "text/x-rst", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".html": "text/html", ".htm": "text/html", ".css": "text/css", ".xml": "application/xml",
	".json": "application/json", ".jsonl": "application/jsonl", ".ndjson": "application/x-ndjson",
	".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
	".ini": "text/plain", ".conf": "text/plain", ".cfg": "text/plain", ".env": "text/plain",
	".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript",
	".ts": "text/x-typescript", ".tsx": "text/x-typescript", ".jsx": "text/javascript",
	".go": "text/x-go", ".py": "text/x-python", ".rb": "text/x-ruby", ".rs": "text/x-rust",
	".java": "text/x-java", ".kt": "text/x-kotlin", ".c": "text/x-c", ".h": "text/x-c",
	".cc": "text/x-c++", ".cpp": "text/x-c++", ".hpp": "text/x-c++", ".cs": "text/x-csharp",
	".php": "text/x-php", ".pl": "text/x-perl", ".lua": "text/x-lua", ".r": "text/x-r",
	".sh": "text/x-shellscript", ".bash": "text/x-shellscript", ".zsh": "text/x-shellscript",
	".sql": "application/sql", ".proto": "text/plain", ".tf": "text/plain",
	".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".avif": "image/avif", ".ico": "image/vnd.microsoft.icon",
	".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip",
	".tgz": "application/gzip", ".zst": "application/zstd", ".tar": "application/x-tar",
	".bz2": "application/x-bzip2", ".xz": "application/x-xz", ".wasm": "application/wasm",
	".mp3": "audio/mpeg", ".mp4": "video/mp4", ".webm": "video/webm", ".wav": "audio/wav",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
}

// mimeNames maps whole (lower-case) base names that carry no extension.
var mimeNames = map[string]string{
	"dockerfile": "text/plain", "makefile": "text/plain", "readme": "text/plain",
	"license": "text/plain", "containerfile": "text/plain",
}

// MIMEType returns the MIME type for a file name from the fixed table, or
// FallbackMIMEType. The rule is the extension, case-insensitively; nothing
// is sniffed, so the answer never depends on content or on the system.
func MIMEType(name string) string {
	lower := strings.ToLower(name)
	if t, ok := mimeTypes[path.Ext(lower)]; ok {
		return t
	}
	if t, ok := mimeNames[lower]; ok {
		return t
	}
	return FallbackMIMEType
}
