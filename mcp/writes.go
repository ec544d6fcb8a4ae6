package mcp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
)

// The write tools, served only when some workdir is rw. Their
// definitions live in writeTools, part of the one inventory.

type writeTextFileIn struct {
	Workdir          string `json:"workdir"`
	Path             string `json:"path"`
	Content          string `json:"content"`
	ExpectedRevision string `json:"expected_revision,omitempty"`
}

type editTextFileIn struct {
	Workdir          string     `json:"workdir"`
	Path             string     `json:"path"`
	Edits            []sfs.Edit `json:"edits"`
	ExpectedRevision string     `json:"expected_revision"`
}

type createDirectoryIn struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path"`
}

type movePathIn struct {
	Workdir          string `json:"workdir"`
	Source           string `json:"source"`
	Destination      string `json:"destination"`
	ExpectedRevision string `json:"expected_revision,omitempty" jsonschema:"move the file only if unchanged"`
}

type deletePathIn struct {
	Workdir          string `json:"workdir"`
	Path             string `json:"path"`
	ExpectedRevision string `json:"expected_revision,omitempty"`
}

func writeTools(lim sfs.Limits) []tool {
	editSchema := inputSchema[editTextFileIn](nil)
	edits := editSchema.Properties["edits"]
	edits.MinItems, edits.MaxItems = ptr(1), ptr(sfs.MaxEdits)
	// The description says what old_text and new_text must be.
	for _, p := range edits.Items.Properties {
		p.Description = ""
	}
	edits.Items.AdditionalProperties = nil
	return []tool{
		{
			def: &sdk.Tool{
				Name: "write_text_file",
				Description: fmt.Sprintf("Create a text file (no expected_revision; its parent must exist, it must not) or replace its whole content (expected_revision: its current revision). "+
					"At most %s, atomic. Answers the new revision and a unified diff.", sizeText(lim.MaxWriteBytes)),
				Annotations: change("Write text file", true),
				InputSchema: inputSchema[writeTextFileIn](nil),
			},
			// Writes hold at most a few times SERVERFS_MAX_WRITE_BYTES, like
			// their request body.
			cost:     cheap,
			register: register(writeTextFile),
		},
		{
			def: &sdk.Tool{
				Name: "edit_text_file",
				Description: fmt.Sprintf("Replace exact old_text with new_text (edits applied together) in the file at revision expected_revision. " +
					"Each old_text must occur once (EDIT_NOT_FOUND; EDIT_AMBIGUOUS: add context); if one fails nothing changes. Answers the new revision and a diff."),
				Annotations: change("Edit text file", true),
				InputSchema: editSchema,
			},
			cost:     cheap,
			register: register(editTextFile),
		},
		{
			def: &sdk.Tool{
				Name:        "create_directory",
				Description: "Create a directory and missing parents; an existing one is answered with action \"exists\".",
				Annotations: change("Create directory", false),
				InputSchema: inputSchema[createDirectoryIn](nil),
			},
			cost:     cheap,
			register: register(createDirectory),
		},
		{
			def: &sdk.Tool{
				Name:        "move_path",
				Description: "Move or rename a file or directory within a workdir; no revision needed. Never overwrites (PATH_EXISTS); the destination's parent must exist. A directory holding hidden or credential files is not moved.",
				Annotations: change("Move path", false),
				InputSchema: inputSchema[movePathIn](nil),
			},
			cost:     cheap,
			register: register(movePath),
		},
		{
			def: &sdk.Tool{
				Name:        "delete_path",
				Description: "Delete a file (expected_revision: its current revision) or an empty directory (else DIRECTORY_NOT_EMPTY; hidden files count). No recursive delete, no undo.",
				Annotations: change("Delete path", true),
				InputSchema: inputSchema[deletePathIn](nil),
			},
			cost:     cheap,
			register: register(deletePath),
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
