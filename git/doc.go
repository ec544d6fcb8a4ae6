// Package git is ServerFS's repository logic for the repository whose
// work tree is a workdir's root: status and diff, commit, history (log,
// show, blame), checkout into a workspace, and the merge queue that
// submits a workspace's changes; faithful to the git CLI (which the tests
// use as the oracle). Its low-level parts live below it in git/internal:
// the index file codec (indexfile), the object store reader (odb:
// objects located, sized and streamed) over the pack reader (pack), the
// ref and reflog writer (refs) and git's path and dotfile refusals
// (pathrule); go-git's storage over them and blob writes are here. Every
// file it reads goes through fs's resolver; paths the policy hides never
// appear in an answer.
package git
