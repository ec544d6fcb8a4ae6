package errs

// Path and read codes: the path an agent sent, the policy that guards it, reading, listing and search.
const (
	WorkdirNotFound         Code = "WORKDIR_NOT_FOUND"
	PathNotFound            Code = "PATH_NOT_FOUND"
	NotADirectory           Code = "NOT_A_DIRECTORY"
	NotAFile                Code = "NOT_A_FILE"
	AccessDenied            Code = "ACCESS_DENIED"
	PathOutsideWorkdir      Code = "PATH_OUTSIDE_WORKDIR"
	SymlinkNotAllowed       Code = "SYMLINK_NOT_ALLOWED"
	HiddenPathNotAllowed    Code = "HIDDEN_PATH_NOT_ALLOWED"
	DeniedPath              Code = "DENIED_PATH"
	BinaryFile              Code = "BINARY_FILE"
	UnsupportedTextEncoding Code = "UNSUPPORTED_TEXT_ENCODING"
	UnsupportedFileType     Code = "UNSUPPORTED_FILE_TYPE"
	ReadLimitExceeded       Code = "READ_LIMIT_EXCEEDED"
	LineTooLarge            Code = "LINE_TOO_LARGE"
	SearchTimeout           Code = "SEARCH_TIMEOUT"
	SearchLimitReached      Code = "SEARCH_LIMIT_REACHED"

	// InvalidPath: the path text itself is unusable (absolute, NUL,
	// backslash, not UTF-8, too long).
	InvalidPath Code = "INVALID_PATH"
	// InvalidArgument: a numeric or enum argument is out of range.
	InvalidArgument Code = "INVALID_ARGUMENT"
	// InvalidPattern: a glob pattern does not compile or is too long.
	InvalidPattern Code = "INVALID_PATTERN"
	// LineOutOfRange: read start_line is past the last line.
	LineOutOfRange Code = "LINE_OUT_OF_RANGE"
	// DirectoryTooLarge: a directory holds more entries than
	// SERVERFS_MAX_WALK_ENTRIES, so it cannot be listed in a stable order.
	DirectoryTooLarge Code = "DIRECTORY_TOO_LARGE"
	// Canceled: the request was cancelled or ran out of time.
	Canceled Code = "CANCELED"
)
