package v1alpha1

import (
	"fmt"
	"time"
)

// IsReservedClusterClaimName reports whether name is one of the reserved
// ClusterClaim names, which the agent reports before custom claims.
func IsReservedClusterClaimName(name string) bool {
	for _, reserved := range ReservedClusterClaimNames {
		if name == reserved {
			return true
		}
	}
	return false
}

// ParseProgressDeadline interprets a progressDeadline value. It returns
// forever=true for "None" and the empty string (the API default), and the
// duration otherwise. A value the CRD pattern lets through but that is not a
// valid duration, such as "10mins", is an error.
func ParseProgressDeadline(value string) (d time.Duration, forever bool, err error) {
	if value == "" || value == ProgressDeadlineNone {
		return 0, true, nil
	}
	d, err = time.ParseDuration(value)
	if err != nil {
		return 0, false, fmt.Errorf("invalid progressDeadline %q: %w", value, err)
	}
	if d < 0 {
		return 0, false, fmt.Errorf("invalid progressDeadline %q: must not be negative", value)
	}
	return d, false, nil
}

// ProgressDeadlineDuration parses the config's progressDeadline with
// ParseProgressDeadline.
func (c *RolloutConfig) ProgressDeadlineDuration() (d time.Duration, forever bool, err error) {
	return ParseProgressDeadline(c.ProgressDeadline)
}
