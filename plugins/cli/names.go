package cli

import "strings"

// namePrefixLength is the longest name prefix NamePrefix keeps: it leaves
// room for a suffix within the 253 characters of a DNS-1123 subdomain.
const namePrefixLength = 200

// NamePrefix returns name cut to 200 characters, without a trailing '-' or
// '.', to which a verb appends a suffix (a generateName's, or a hash) and
// still has a valid object name.
func NamePrefix(name string) string {
	if len(name) <= namePrefixLength {
		return name
	}
	return strings.TrimRight(name[:namePrefixLength], "-.")
}
