package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// Named actions in workspaces. The MCP server keeps its
// workspaces in its state directory (SERVERFS_STATE_DIR); the policy's
// workspaces_dir is that directory as the host sees it. An action run
// in the workspace ALIAS@ID runs exactly as in the workdir ALIAS (the
// same argv, pins, argument checks, limits and sandbox), with the
// workspace's tree as its root: the live work tree and its .git are
// neither its directory nor readable by it.

// maxWorkspaceMeta bounds the meta.json read.
const maxWorkspaceMeta = 64 << 10

// workspaceTree returns the host path of the tree of workspace id of the
// workdir alias: <workspaces_dir>/workspaces/<id>/tree, whose meta.json
// must name alias as its workdir. Nothing on the way may be a symlink.
func (s *Server) workspaceTree(alias, id string) (string, error) {
	if s.policy.WorkspacesDir == "" {
		return "", errs.At(errs.InvalidArgument, alias, "", "the bridge runs no actions in workspaces: its policy has no workspaces_dir (the server's SERVERFS_STATE_DIR as the host sees it)")
	}
	if !sfs.ValidWorkspaceID(id) {
		return "", errs.At(errs.InvalidArgument, alias, "", "not a workspace ID")
	}
	notFound := errs.New(errs.WorkdirNotFound, fmt.Sprintf("%q: the bridge finds no such workspace", alias+"@"+id))
	dir := filepath.Join(s.policy.WorkspacesDir, "workspaces", id)
	for _, p := range []string{filepath.Join(s.policy.WorkspacesDir, "workspaces"), dir, filepath.Join(dir, "tree")} {
		st, err := os.Lstat(p)
		if err != nil || !st.IsDir() {
			return "", notFound
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "meta.json"), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", notFound
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxWorkspaceMeta))
	if err != nil {
		return "", notFound
	}
	var meta struct {
		Workdir string `json:"workdir"`
		ID      string `json:"id"`
	}
	if json.Unmarshal(b, &meta) != nil || meta.Workdir != alias || meta.ID != id {
		return "", notFound
	}
	return filepath.Join(dir, "tree"), nil
}

// runInWorkspace runs the command action of p in its workspace, holding
// the workspace's lease.
func (s *Server) runInWorkspace(ctx context.Context, p wire.ActionParams, wp WorkdirPolicy) (any, error) {
	tree, err := s.workspaceTree(p.Workdir, p.Workspace)
	if err != nil {
		return nil, err
	}
	// The tree as a workdir of its own, under the parent's alias: the
	// pins and the path argument are checked there.
	cfg, err := sfs.LoadConfig(nil, []string{p.Workdir + "=" + tree + ":rw:repo"})
	if err != nil {
		return nil, errs.At(errs.Internal, p.Workdir, "", "the workspace cannot be opened").Wrap(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		return nil, errs.At(errs.Internal, p.Workdir, "", "the workspace cannot be opened").Wrap(err)
	}
	defer f.Close()
	ws := wp
	ws.Root = tree
	// Outputs name the tree as the agent does, ALIAS@ID (and the live
	// root "ALIAS:", the other workspaces "<bridge>" as always).
	lim := s.runLimits()
	lim.Replace = append([]PathName{{tree, p.Workdir + "@" + p.Workspace + ":"}}, lim.Replace...)
	lim.workspace = true
	return s.withLease(p.Workdir+"@"+p.Workspace, "action "+p.Action, func() (any, error) {
		return RunAction(ctx, f, p.Workdir, ws, p.Action, p.Path, lim)
	})
}
