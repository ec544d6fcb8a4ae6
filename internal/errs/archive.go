package errs

// Archive codes: members of zip and tar archives read in place. A member
// that is missing or hidden by the path policy is PATH_NOT_FOUND, a
// directory or link opened as a file NOT_A_FILE, an unsupported
// compression method UNSUPPORTED_FILE_TYPE, as for files on disk.
const (
	// ArchiveCorrupt: the archive's structure is malformed or truncated,
	// or a member's data does not match its declared size or checksum.
	ArchiveCorrupt Code = "ARCHIVE_CORRUPT"
	// ArchiveEncrypted: the member is encrypted; it is never decrypted.
	ArchiveEncrypted Code = "ARCHIVE_ENCRYPTED"
	// ArchiveTooLarge: a bound on archives was reached: decompressed
	// bytes, expansion ratio, member count or name length (a bomb, or an
	// archive larger than the operator allows).
	ArchiveTooLarge Code = "ARCHIVE_TOO_LARGE"
)
