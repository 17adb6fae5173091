package config

import (
	"fmt"
	"strings"
)

// LookupFunc reports the value of an environment variable and whether it is
// set, like [os.LookupEnv].
type LookupFunc func(name string) (string, bool)

// unsetVarError reports a ${VAR} reference to a variable that is not set and
// has no default.
type unsetVarError struct{ Name string }

func (e *unsetVarError) Error() string {
	return fmt.Sprintf("environment variable %s is not set (set it, or write ${%s:-default})", e.Name, e.Name)
}

// expandVars replaces ${VAR} and ${VAR:-default} in s with values from lookup.
//
// ${VAR:-default} takes the default when VAR is unset or empty, as in the
// shell. The default is literal text up to the first "}" and is not expanded
// itself. "$${" stands for a literal "${". A "$" not followed by "{" is kept
// as it is, so ordinary dollar signs need no escaping.
//
// Cursor's spellings work too, so that its entries copy over unchanged:
// ${env:VAR} is ${VAR}, and ${userHome} is the home folder unless a
// variable of that name is set.
func expandVars(s string, lookup LookupFunc) (string, error) {
	return expand(s, lookup, nil)
}

// UnsetVars returns the variables that s refers to without a default and
// that lookup does not know: the ones [expandVars] would fail on. It reports
// nothing for a string Expand cannot read at all.
func UnsetVars(s string, lookup LookupFunc) []string {
	var names []string
	if _, err := expand(s, lookup, func(name string) string { names = append(names, name); return "" }); err != nil {
		return nil
	}
	return names
}

// expand is [expandVars]; if unset is not nil, it is told each variable that
// is unset without a default, which then expands to what it returns.
func expand(s string, lookup LookupFunc, unset func(name string) string) (string, error) {
	i := strings.Index(s, "${")
	if i < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		// "$${" is an escaped literal "${".
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			i = strings.Index(s, "${")
			continue
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %q (write $${ for a literal ${)", s[i:])
		}
		ref := rest[:end]
		name, def, hasDef := strings.Cut(ref, ":-")
		name = strings.TrimPrefix(name, "env:")
		if !validVarName(name) {
			return "", fmt.Errorf("invalid variable name %q in ${%s} (use letters, digits and _, not starting with a digit)", name, ref)
		}
		v, ok := lookup(name)
		if !ok && name == "userHome" {
			if v, ok = lookup("HOME"); !ok {
				v, ok = lookup("USERPROFILE")
			}
		}
		switch {
		case hasDef && v == "":
			v = def
		case !ok && unset != nil:
			v = unset(name)
		case !ok:
			return "", &unsetVarError{Name: name}
		}
		b.WriteString(v)
		s = rest[end+1:]
		i = strings.Index(s, "${")
	}
}

func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
