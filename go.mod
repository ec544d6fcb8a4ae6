module github.com/serverfs/serverfs

go 1.26.0

require (
	github.com/gobwas/glob v1.1.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
