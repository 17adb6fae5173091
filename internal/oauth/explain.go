package oauth

import (
	"errors"
	"net/url"
	"regexp"
	"sync"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"golang.org/x/oauth2"
)

// describe says what an error of discovery, registration or a token
// request means without quoting what a server sent: the SDK's and oauth2's
// errors carry answers' bodies (where a registration's client secret or a
// token may stand) and Go's names for the types they decode into.
func describe(err error) string {
	var re *oauth2.RetrieveError
	var ue *url.Error
	switch {
	case errors.As(err, &re):
		return "the authorization server refused (" + describeRetrieveError(re) + ")"
	case errors.As(err, &ue):
		return describe(ue.Err) // without the URL, whose query may hold a secret
	}
	return plain(frame.ExplainError(err))
}

var (
	// oauthex's registration errors end with the answer's body.
	registrationStatus = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)registration failed with status ([^:]*):.*`) })
	decodeBody         = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)(failed to decode [^:]*response: .*?) \(.*`) })
)

// plain drops the answers' bodies that oauthex's registration errors end
// with (see describe).
func plain(msg string) string {
	msg = registrationStatus().ReplaceAllString(msg, "registration refused with HTTP $1")
	return decodeBody().ReplaceAllString(msg, "$1")
}
