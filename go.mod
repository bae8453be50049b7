module github.com/goffload/goffload

go 1.25

require (
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/compress v1.20.3
)

require golang.org/x/arch v0.12.0
