package git

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/serverfs/serverfs/git/internal/pathrule"
	"github.com/serverfs/serverfs/internal/errs"
)

// maxDotfileCheck bounds the .gitmodules or .gitattributes a commit reads
// back to check (the size git reads attribute files up to here too).
const maxDotfileCheck = maxConfigBytes

// dotfileContentErr refuses blob id recorded at p (mode mode) when git
// fsck would flag its content; nil for every other path.
func (r *Repo) dotfileContentErr(alias, p string, mode filemode.FileMode, id plumbing.Hash) error {
	if mode != filemode.Regular && mode != filemode.Executable {
		return nil
	}
	name := p[strings.LastIndexByte(p, '/')+1:]
	modules, attrs := pathrule.IsGitmodulesName(name), pathrule.IsGitattributesName(name)
	if !modules && !attrs {
		return nil
	}
	size, err := r.blobSize(id)
	if err != nil {
		return err
	}
	if size > maxDotfileCheck {
		return errs.At(errs.RepoUnsupported, alias, p, fmt.Sprintf(
			"is larger than the %d bytes ServerFS reads to check it as git fsck checks .gitmodules and .gitattributes", maxDotfileCheck))
	}
	data, err := r.readBlob(id, size)
	if err != nil {
		return err
	}
	var rule *pathrule.Rule
	if modules {
		rule = pathrule.Gitmodules(data)
	}
	if rule == nil && attrs {
		rule = pathrule.Gitattributes(data)
	}
	if rule != nil {
		return pathrule.Err(alias, p, rule)
	}
	return nil
}
