package version

import (
	"fmt"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// The supported version skew. Only major and minor versions count: any two
// patch releases of one minor version are compatible.
const (
	// MaxAgentMinorSkew is how many minor versions an agent may be older than
	// the hub controller. An agent is never supported newer than the hub
	// controller: the hub must be upgraded first.
	MaxAgentMinorSkew = 2
	// MaxClientMinorSkew is how many minor versions the plugin may be older
	// or newer than the hub controller.
	MaxClientMinorSkew = 1
)

// Verdict is the outcome of a skew check.
type Verdict string

// Verdicts of a skew check.
const (
	// Supported: both versions are within the policy.
	Supported Verdict = "Supported"
	// Unsupported: the versions are outside the policy.
	Unsupported Verdict = "Unsupported"
	// NotJudged: one side is a development build (not a release version) or
	// reports no version, so the policy does not apply.
	NotJudged Verdict = "NotJudged"
)

// Judgement is a Verdict with its reason, readable after the versions it
// judged, such as "3 minor versions older than the hub controller v0.7.1".
type Judgement struct {
	// Verdict is the outcome.
	Verdict Verdict `json:"verdict"`
	// Reason explains the verdict.
	Reason string `json:"reason,omitempty"`
}

// Release parses v as a release version: a semantic version such as
// v0.7.1, or one a git describe string extends (v0.7.1-3-gabc1234). It
// returns false for development builds: the unstamped v0.0.0-dev, a bare
// commit hash, or anything else that is not semantic.
func Release(v string) (*utilversion.Version, bool) {
	parsed, err := utilversion.ParseSemantic(v)
	if err != nil || (parsed.Major() == 0 && parsed.Minor() == 0 && parsed.Patch() == 0) {
		return nil, false
	}
	return parsed, true
}

// CheckAgent judges an agent at version agent against the hub controller at
// version hub: the agent may be up to MaxAgentMinorSkew minor versions
// older, of the same major version, and never newer.
func CheckAgent(hub, agent string) Judgement {
	return check(hub, agent, "agent", MaxAgentMinorSkew, 0)
}

// CheckClient judges the plugin at version client against the hub controller
// at version hub: within MaxClientMinorSkew minor versions either way, of the
// same major version.
func CheckClient(client, hub string) Judgement {
	return check(hub, client, "kubectl-ocm", MaxClientMinorSkew, MaxClientMinorSkew)
}

// check judges the version other of a component named otherName against
// the hub controller at version hub: of the same major version, at most
// maxOlder minor versions older and maxNewer newer.
func check(hub, other, otherName string, maxOlder, maxNewer int) Judgement {
	h, o, j, ok := releases(hub, "hub controller", other, otherName)
	if !ok {
		return j
	}
	if o.Major() != h.Major() {
		return Judgement{Unsupported, fmt.Sprintf("another major version than the hub controller %s", hub)}
	}
	behind := int(h.Minor()) - int(o.Minor())
	switch {
	case behind > maxOlder:
		return Judgement{Unsupported, fmt.Sprintf("%d minor versions older than the hub controller %s (the policy allows %d)", behind, hub, maxOlder)}
	case -behind > maxNewer && maxNewer == 0:
		return Judgement{Unsupported, fmt.Sprintf("newer than the hub controller %s", hub)}
	case -behind > maxNewer:
		return Judgement{Unsupported, fmt.Sprintf("%d minor versions newer than the hub controller %s (the policy allows %d)", -behind, hub, maxNewer)}
	}
	return Judgement{Verdict: Supported}
}

// releases parses the hub's and the other side's versions, or returns the
// NotJudged judgement naming the side that is no release.
func releases(hub, hubName, other, otherName string) (h, o *utilversion.Version, j Judgement, ok bool) {
	for _, side := range []struct{ v, name string }{{other, otherName}, {hub, hubName}} {
		if side.v == "" {
			return nil, nil, Judgement{NotJudged, "the " + side.name + " reports no version"}, false
		}
		if _, ok := Release(side.v); !ok {
			return nil, nil, Judgement{NotJudged, fmt.Sprintf("the %s %s is a development build", side.name, side.v)}, false
		}
	}
	h, _ = Release(hub)
	o, _ = Release(other)
	return h, o, Judgement{}, true
}
