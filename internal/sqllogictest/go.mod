module github.com/moraine-go/moraine/internal/sqllogictest

go 1.26.0
