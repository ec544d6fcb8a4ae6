package errs

// Document codes: PDFs, office documents (docx, xlsx, pptx, odt, ods) and
// images read as text or as image content. A file of a kind not read is
// UNSUPPORTED_FILE_TYPE, as on disk.
const (
	// DocumentCorrupt: the document's structure is malformed or
	// truncated (a PDF's cross-reference table, an office document's XML,
	// an image's header).
	DocumentCorrupt Code = "DOCUMENT_CORRUPT"
	// DocumentEncrypted: the document is encrypted or password
	// protected; it is never decrypted.
	DocumentEncrypted Code = "DOCUMENT_ENCRYPTED"
	// DocumentTooLarge: a bound on documents was reached: objects, object
	// nesting, pages, extracted text, an image's pixels.
	DocumentTooLarge Code = "DOCUMENT_TOO_LARGE"
)
