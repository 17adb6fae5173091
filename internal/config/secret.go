package config

import "strings"

// MaskURL returns s with the userinfo of the URL it starts with masked:
// http://user:***@host, or http://***@host when there is no password (a
// token given as the user name). Everything else is kept. It is the one
// masking of URLs in every message, log line and summary of the workbench.
// It works on text that is not a valid URL too (a URL as the file writes
// it, with its ${VAR} references), and returns any other text unchanged.
func MaskURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return s
	}
	masked := "***"
	if user, _, hasPassword := strings.Cut(rest[:at], ":"); hasPassword {
		masked = user + ":***"
	}
	return s[:i+3] + masked + rest[at:]
}

// shown is a string value as messages quote it: as the file writes it,
// its ${VAR} references unexpanded (what a variable holds may be a
// secret), a URL's userinfo masked.
func (n *node) shown() string {
	if n.written != "" {
		return MaskURL(n.written)
	}
	return MaskURL(n.str)
}

// expanded reports whether n is a string that ${VAR} references made.
func (n *node) expanded() bool { return n != nil && n.written != "" }
