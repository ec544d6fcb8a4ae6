// Package codecheck holds tests that enforce the repository's code-shape
// rules over every production Go file; it has no production code of its own.
package codecheck
