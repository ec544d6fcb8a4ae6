package errs

// Write codes: the write tools and the workdir's writer lease.
const (
	// WorkdirReadOnly: a write on a workdir the operator did not mark rw.
	WorkdirReadOnly Code = "WORKDIR_READ_ONLY"
	// RevisionMismatch: expected_revision is not the file's current
	// revision (or a create found the target present); nothing changed.
	RevisionMismatch Code = "REVISION_MISMATCH"
	// EditNotFound: an edit's old_text does not occur in the file.
	EditNotFound Code = "EDIT_NOT_FOUND"
	// EditAmbiguous: an edit's old_text occurs more than once.
	EditAmbiguous Code = "EDIT_AMBIGUOUS"
	// PathExists: the destination of a create or move already exists.
	PathExists Code = "PATH_EXISTS"
	// DirectoryNotEmpty: delete_path on a directory with entries.
	DirectoryNotEmpty Code = "DIRECTORY_NOT_EMPTY"
	// WriteLimitExceeded: new content, or the file being changed, is
	// larger than SERVERFS_MAX_WRITE_BYTES.
	WriteLimitExceeded Code = "WRITE_LIMIT_EXCEEDED"
	// InvalidContent: content to write is not UTF-8 text without NUL.
	InvalidContent Code = "INVALID_CONTENT"
	// NoSpace: the filesystem is full or the quota is exhausted.
	NoSpace Code = "NO_SPACE"
	// LeaseBusy: another write holds the workdir's writer lease for
	// longer than a request may wait.
	LeaseBusy Code = "LEASE_BUSY"
)
