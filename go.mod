module github.com/goffload/goffload

go 1.22

require github.com/google/go-cmp v0.7.0
