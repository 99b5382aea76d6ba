module github.com/vscsid/vscsid

go 1.26.8

require (
	go.uber.org/multierr v1.10.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
