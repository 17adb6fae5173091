package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

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
	return plain(err.Error())
}

var (
	// "json: cannot unmarshal X into Go struct field T.name of type int64"
	// (T may hold spaces) or "into Go value of type T", where X is a JSON
	// kind (encoding/json) or a quoted piece of the input (the SDK's
	// decoder), which may be a secret.
	unmarshal = regexp.MustCompile(`json: cannot unmarshal ("(?:[^"\\]|\\.)*"|\w+) into Go (?:struct field .*?\.([\w-]+)|value) of type (\S+)`)
	// oauthex's registration errors end with the answer's body.
	registrationStatus = regexp.MustCompile(`(?s)registration failed with status ([^:]*):.*`)
	decodeBody         = regexp.MustCompile(`(?s)(failed to decode [^:]*response: .*?) \(.*`)
)

// plain rewrites an error text of the SDK into the user's terms (see
// describe).
func plain(msg string) string {
	msg = registrationStatus.ReplaceAllString(msg, "registration refused with HTTP $1")
	msg = decodeBody.ReplaceAllString(msg, "$1")
	return unmarshal.ReplaceAllStringFunc(msg, func(m string) string {
		s := unmarshal.FindStringSubmatch(m)
		got := s[1]
		if strings.HasPrefix(got, `"`) {
			got = kindOf(got)
		}
		what := "the answer"
		if s[2] != "" {
			what = strconv.Quote(s[2])
		}
		return fmt.Sprintf("%s is a JSON %s where %s was expected", what, got, jsonKind(s[3]))
	})
}

// kindOf names the JSON kind a quoted piece of input starts with.
func kindOf(quoted string) string {
	piece, err := strconv.Unquote(quoted)
	if err != nil || piece == "" {
		return "value"
	}
	switch c := piece[0]; {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	}
	return "number"
}

// jsonKind names the JSON a Go type is decoded from.
func jsonKind(goType string) string {
	switch t := strings.TrimLeft(goType, "*"); {
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return "an object"
}
