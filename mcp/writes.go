package mcp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
)

// The write tools (issue 6), served only when some workdir is rw. Their
// definitions live in writeTools, part of the one inventory.

type writeTextFileIn struct {
	Workdir          string `json:"workdir" jsonschema:"alias of a read-write workdir (mode rw in list_workdirs)"`
	Path             string `json:"path" jsonschema:"file relative to the workdir root; its parent directory must exist"`
	Content          string `json:"content" jsonschema:"the complete new content of the file: UTF-8 text without NUL bytes"`
	ExpectedRevision string `json:"expected_revision,omitempty" jsonschema:"revision of the file being replaced, from read_text_file or stat_file; omit it to create a new file"`
}

type editTextFileIn struct {
	Workdir          string     `json:"workdir" jsonschema:"alias of a read-write workdir (mode rw in list_workdirs)"`
	Path             string     `json:"path" jsonschema:"file relative to the workdir root"`
	Edits            []sfs.Edit `json:"edits" jsonschema:"replacements applied together to the current content; each old_text must occur exactly once and edits must not overlap"`
	ExpectedRevision string     `json:"expected_revision" jsonschema:"the file's current revision, from read_text_file or stat_file"`
}

type createDirectoryIn struct {
	Workdir string `json:"workdir" jsonschema:"alias of a read-write workdir (mode rw in list_workdirs)"`
	Path    string `json:"path" jsonschema:"directory to create, relative to the workdir root; missing parents are created too"`
}

type movePathIn struct {
	Workdir          string `json:"workdir" jsonschema:"alias of a read-write workdir (mode rw in list_workdirs)"`
	Source           string `json:"source" jsonschema:"file or directory to move, relative to the workdir root"`
	Destination      string `json:"destination" jsonschema:"new path in the same workdir; it must not exist and its parent directory must"`
	ExpectedRevision string `json:"expected_revision,omitempty" jsonschema:"optional: the source file's current revision, to move it only if unchanged"`
}

type deletePathIn struct {
	Workdir          string `json:"workdir" jsonschema:"alias of a read-write workdir (mode rw in list_workdirs)"`
	Path             string `json:"path" jsonschema:"file or empty directory to delete, relative to the workdir root"`
	ExpectedRevision string `json:"expected_revision,omitempty" jsonschema:"required for a file: its current revision from read_text_file or stat_file; omit it for a directory"`
}

func writeTools(lim sfs.Limits) []tool {
	editSchema := inputSchema[editTextFileIn](nil)
	edits := editSchema.Properties["edits"]
	edits.MinItems, edits.MaxItems = ptr(1), ptr(sfs.MaxEdits)
	return []tool{
		{
			def: &sdk.Tool{
				Name: "write_text_file",
				Description: fmt.Sprintf("Create a text file, or replace the whole content of one, in a read-write workdir. To replace, pass the file's current revision as expected_revision (read_text_file and stat_file return it); to create, omit it (the file must not exist). "+
					"A stale revision is refused with REVISION_MISMATCH and the current revision; nothing changes. Content is UTF-8 text of at most %d bytes. The write is atomic and keeps the file's permissions. "+
					"Returns the new revision and a unified diff (at most %d bytes; none, diff_omitted, when the content replaced was not UTF-8 text). For small changes to a large file prefer edit_text_file.", lim.MaxWriteBytes, sfs.DiffMaxBytes),
				Annotations: change("Write text file", true),
				InputSchema: inputSchema[writeTextFileIn](nil),
			},
			register: register("write_text_file", writeTextFile),
		},
		{
			def: &sdk.Tool{
				Name: "edit_text_file",
				Description: fmt.Sprintf("Change parts of a text file in a read-write workdir: a list of exact old_text → new_text replacements (up to %d) applied together to the current content, which must have the revision expected_revision. "+
					"Each old_text must occur exactly once, whitespace and line endings included (EDIT_NOT_FOUND, or EDIT_AMBIGUOUS with the count: add surrounding lines); if any edit fails nothing changes. "+
					"Returns the new revision and a unified diff.", sfs.MaxEdits),
				Annotations: change("Edit text file", true),
				InputSchema: editSchema,
			},
			register: register("edit_text_file", editTextFile),
		},
		{
			def: &sdk.Tool{
				Name:        "create_directory",
				Description: "Create a directory, and any missing parents, in a read-write workdir. An existing directory is not an error (action \"exists\"). Never creates through a symlink or inside hidden or .git paths.",
				Annotations: change("Create directory", false),
				InputSchema: inputSchema[createDirectoryIn](nil),
			},
			register: register("create_directory", createDirectory),
		},
		{
			def: &sdk.Tool{
				Name: "move_path",
				Description: "Move or rename a file or directory within one read-write workdir. The destination must not exist (PATH_EXISTS: nothing is ever overwritten) and its parent directory must. " +
					"A directory holding hidden or credential files is not moved. Pass expected_revision to move a file only if it is unchanged.",
				Annotations: change("Move path", false),
				InputSchema: inputSchema[movePathIn](nil),
			},
			register: register("move_path", movePath),
		},
		{
			def: &sdk.Tool{
				Name: "delete_path",
				Description: "Delete a file (expected_revision required: its current revision, so that only the content you read is deleted) or an empty directory (DIRECTORY_NOT_EMPTY otherwise; it may hold hidden files) in a read-write workdir. " +
					"There is no recursive delete and no undo.",
				Annotations: change("Delete path", true),
				InputSchema: inputSchema[deletePathIn](nil),
			},
			register: register("delete_path", deletePath),
		},
	}
}

func writeInfo(workdir, path string, r *sfs.WriteResult) callInfo {
	info := callInfo{workdir: workdir, path: path}
	if r != nil && r.Size != nil {
		info.bytes = int(*r.Size)
	}
	return info
}

func writeTextFile(ctx context.Context, d *Deps, in writeTextFileIn) (*writeOut, callInfo, error) {
	r, err := d.FS.WriteFile(ctx, in.Workdir, in.Path, in.Content, in.ExpectedRevision)
	return &writeOut{r}, writeInfo(in.Workdir, in.Path, r), err
}

func editTextFile(ctx context.Context, d *Deps, in editTextFileIn) (*writeOut, callInfo, error) {
	r, err := d.FS.EditFile(ctx, in.Workdir, in.Path, in.Edits, in.ExpectedRevision)
	return &writeOut{r}, writeInfo(in.Workdir, in.Path, r), err
}

func createDirectory(ctx context.Context, d *Deps, in createDirectoryIn) (*writeOut, callInfo, error) {
	r, err := d.FS.CreateDirectory(ctx, in.Workdir, in.Path)
	return &writeOut{r}, writeInfo(in.Workdir, in.Path, r), err
}

func movePath(ctx context.Context, d *Deps, in movePathIn) (*writeOut, callInfo, error) {
	r, err := d.FS.MovePath(ctx, in.Workdir, in.Source, in.Destination, in.ExpectedRevision)
	return &writeOut{r}, writeInfo(in.Workdir, in.Source, r), err
}

func deletePath(ctx context.Context, d *Deps, in deletePathIn) (*writeOut, callInfo, error) {
	r, err := d.FS.DeletePath(ctx, in.Workdir, in.Path, in.ExpectedRevision)
	return &writeOut{r}, writeInfo(in.Workdir, in.Path, r), err
}

// writeOut is a write's answer: its JSON is sfs.WriteResult's; its text
// is one line saying what happened and the new revision, then the diff as
// plain unified-diff text (not a JSON string a model reads escaped).
type writeOut struct{ *sfs.WriteResult }

// Text is "action workdir:path [from workdir:from] [revision R] [size N]",
// then the diff and a line when it was cut or omitted.
func (o *writeOut) Text() string {
	r := o.WriteResult
	if r == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(r.Action)
	b.WriteByte(' ')
	if r.FromPath != "" {
		b.WriteString(r.Workdir + ":" + displayName(r.FromPath) + " -> ")
	}
	b.WriteString(r.Workdir + ":" + displayName(r.Path))
	if r.Revision != "" {
		b.WriteString(" revision " + r.Revision)
	}
	if r.Size != nil {
		b.WriteString(" size " + strconv.FormatInt(*r.Size, 10))
	}
	b.WriteByte('\n')
	b.WriteString(r.Diff)
	if r.Diff != "" && !strings.HasSuffix(r.Diff, "\n") {
		b.WriteByte('\n')
	}
	switch {
	case r.DiffTruncated:
		b.WriteString("diff truncated at " + strconv.Itoa(sfs.DiffMaxBytes) + " bytes\n")
	case r.DiffOmitted:
		b.WriteString("diff omitted: the content replaced was not UTF-8 text\n")
	}
	return b.String()
}
