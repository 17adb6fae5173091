// Package searchdata checks the tool search's evaluation data in testdata/search: the captured tool lists and the held-out queries.
package searchdata
