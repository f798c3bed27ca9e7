package deploystatus

import (
	"cmp"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Reasons a Pod of a Deployment does not become ready, as the kubelet (a
// container's waiting or terminated state) or the scheduler (the
// PodScheduled condition) reports them.
const (
	// ReasonErrImagePull: the last pull of the container's image failed.
	ReasonErrImagePull = "ErrImagePull"
	// ReasonImagePullBackOff: pulls of the image keep failing; the kubelet
	// waits before the next one.
	ReasonImagePullBackOff = "ImagePullBackOff"
	// ReasonInvalidImageName: the image reference cannot be parsed.
	ReasonInvalidImageName = "InvalidImageName"
	// ReasonErrImageNeverPull: the image is not on the node and its pull
	// policy is Never.
	ReasonErrImageNeverPull = "ErrImageNeverPull"
	// ReasonCrashLoopBackOff: the container keeps exiting; the kubelet waits
	// before it starts it again.
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
	// ReasonOOMKilled: the container was killed for exceeding its memory limit.
	ReasonOOMKilled = "OOMKilled"
	// ReasonCreateContainerConfigError: the container's configuration names
	// something missing, such as a Secret or ConfigMap.
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	// ReasonUnschedulable: no node can take the Pod.
	ReasonUnschedulable = corev1.PodReasonUnschedulable
)

// DefaultImageFix is the fix named for an image that cannot be pulled when
// the Inspector's ImageFix is empty.
const DefaultImageFix = "check the image name and that the nodes may pull it (a registry mirror, imagePullSecrets), or load the image into the nodes"

// PodCause is why a Pod of a Deployment does not become ready: one container
// that cannot start or keeps exiting, or the whole Pod that no node can take.
type PodCause struct {
	// Namespace and Pod name the Pod.
	Namespace, Pod string
	// Container names the container; empty for a cause of the whole Pod.
	Container string
	// Reason is the kubelet's or the scheduler's reason, such as
	// ImagePullBackOff, CrashLoopBackOff, OOMKilled or Unschedulable.
	Reason string
	// Message is the kubelet's or the scheduler's message; may be empty.
	Message string
	// Image is the container's image.
	Image string
	// ImageCause names why the image cannot be pulled when the kubelet's
	// message says it, such as ImageCauseUnauthorized; empty otherwise.
	ImageCause string
	// Restarts is how often the container was restarted.
	Restarts int32
	// LastExit describes the container's last termination, such as "exit
	// code 1 (Error)"; empty when it has not terminated.
	LastExit string
	// Logs are the last lines of the log of the container's last run; empty
	// when it wrote none or they could not be read.
	Logs []string
	// LogsUnread says why Logs could not be read; empty when they were.
	LogsUnread string
	// Fix says how to remove the cause.
	Fix string
	// exited is true when the container's current run has ended and the
	// kubelet has not yet put it in back-off: LastExit is that run's end,
	// and the current run's log says why.
	exited bool
}

// Summary describes the cause in one line, without its fix and log lines.
func (c *PodCause) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Pod %s/%s", c.Namespace, c.Pod)
	if c.Container != "" {
		fmt.Fprintf(&b, ", container %s", c.Container)
	}
	switch {
	case c.Reason == ReasonCrashLoopBackOff:
		// The kubelet's message only repeats the back-off and the Pod.
		b.WriteString(": " + c.Reason)
		if c.LastExit != "" {
			b.WriteString("; last " + c.LastExit)
		}
	case c.exited:
		b.WriteString(": terminated with " + c.LastExit)
	default:
		b.WriteString(": " + c.Reason)
		if c.ImageCause != "" {
			b.WriteString(": " + c.ImageCause)
		}
		if c.isImage() && c.Image != "" {
			fmt.Fprintf(&b, " for image %s", c.Image)
		}
		if c.Message != "" {
			b.WriteString(": " + oneLine(c.Message))
		}
		if c.LastExit != "" {
			b.WriteString("; last " + c.LastExit)
		}
	}
	if c.LastExit != "" && c.Restarts > 0 {
		fmt.Fprintf(&b, " after %d restarts", c.Restarts)
	}
	return b.String()
}

// String is the summary and the fix on one line, for progress lines.
func (c *PodCause) String() string {
	return c.Summary() + "; to fix: " + c.Fix
}

// Detail describes the cause on several lines: the summary, the
// container's last log lines when there are any, and the fix.
func (c *PodCause) Detail() string {
	var b strings.Builder
	b.WriteString(c.Summary())
	switch {
	case len(c.Logs) > 0:
		fmt.Fprintf(&b, "\nLast log lines of container %s:", c.Container)
		for _, l := range c.Logs {
			b.WriteString("\n    " + l)
		}
	case c.LogsUnread != "":
		b.WriteString("\nIts log could not be read: " + c.LogsUnread)
	}
	b.WriteString("\nTo fix: " + c.Fix)
	return b.String()
}

// isImage reports whether the cause is an image the node cannot get.
func (c *PodCause) isImage() bool {
	switch c.Reason {
	case ReasonErrImagePull, ReasonImagePullBackOff, ReasonInvalidImageName, ReasonErrImageNeverPull:
		return true
	}
	return false
}

// isExit reports whether the cause is a container that exited, whose log
// says why.
func (c *PodCause) isExit() bool {
	return c.LastExit != ""
}

// podCause returns the cause pod shows, nil when it shows none: the
// scheduler's Unschedulable, else the first init container, then container,
// that waits for a reason other than starting or whose last run failed.
// The fix of an image cause is imageFix. Logs are left to the caller.
func podCause(pod *corev1.Pod, imageFix string) *PodCause {
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == ReasonUnschedulable {
			return &PodCause{Namespace: pod.Namespace, Pod: pod.Name, Reason: ReasonUnschedulable, Message: cond.Message,
				Fix: fmt.Sprintf("give the Pod a node it fits: free or add capacity, or change the node selector, affinity or tolerations that rule the nodes out (`kubectl describe pod -n %s %s`)", pod.Namespace, pod.Name)}
		}
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range statuses {
			if c := containerCause(pod, &statuses[i], imageFix); c != nil {
				return c
			}
		}
	}
	return nil
}

// containerCause returns the cause of container status s of pod, nil when
// it shows none.
func containerCause(pod *corev1.Pod, s *corev1.ContainerStatus, imageFix string) *PodCause {
	c := &PodCause{Namespace: pod.Namespace, Pod: pod.Name, Container: s.Name, Image: s.Image, Restarts: s.RestartCount}
	if c.Image == "" {
		c.Image = specImage(pod, s.Name)
	}
	last := s.LastTerminationState.Terminated
	switch w, t := s.State.Waiting, s.State.Terminated; {
	case w != nil && (w.Reason == "" || w.Reason == "ContainerCreating" || w.Reason == "PodInitializing"):
		return nil
	case w != nil:
		c.Reason, c.Message = w.Reason, w.Message
	case t != nil && t.ExitCode != 0 && s.RestartCount > 0 && pod.Spec.RestartPolicy != corev1.RestartPolicyNever:
		// Between a crash and the kubelet's back-off the container shows
		// its exit; it has restarted before and will again: a crash loop.
		c.Reason, c.exited, last = ReasonCrashLoopBackOff, true, t
	case t != nil && t.ExitCode != 0:
		c.Reason, c.exited, last = cmp.Or(t.Reason, "Error"), true, t
	default:
		return nil
	}
	if last != nil {
		c.LastExit = exitText(last)
	}
	logs := fmt.Sprintf("`kubectl logs -n %s %s -c %s --previous`", pod.Namespace, pod.Name, s.Name)
	if s.State.Terminated != nil {
		logs = fmt.Sprintf("`kubectl logs -n %s %s -c %s`", pod.Namespace, pod.Name, s.Name)
	}
	switch {
	case (c.Reason == ReasonErrImagePull || c.Reason == ReasonImagePullBackOff) && imageCause(c.Message) == ImageCauseUnauthorized:
		c.ImageCause, c.Fix = ImageCauseUnauthorized, unauthorizedFix(c.Image)
	case c.isImage():
		c.Fix = imageFix
	case last != nil && last.Reason == ReasonOOMKilled:
		c.Fix = "raise the container's memory limit; its log may say what it was doing: " + logs
	case c.isExit():
		c.Fix = "its log says why it exits: see the log lines, or " + logs
	case c.Reason == ReasonCreateContainerConfigError:
		c.Fix = fmt.Sprintf("create what the message names, or correct the Pod template (`kubectl describe pod -n %s %s`)", pod.Namespace, pod.Name)
	default:
		c.Fix = fmt.Sprintf("see the Pod's events: `kubectl describe pod -n %s %s`", pod.Namespace, pod.Name)
	}
	return c
}

// exitText describes a termination, such as "exit code 1 (Error)".
func exitText(t *corev1.ContainerStateTerminated) string {
	s := fmt.Sprintf("exit code %d", t.ExitCode)
	if t.Reason != "" {
		s += " (" + t.Reason + ")"
	}
	if t.Signal != 0 {
		s += fmt.Sprintf(", signal %d", t.Signal)
	}
	return s
}

// specImage is the image pod's spec names for container name.
func specImage(pod *corev1.Pod, name string) string {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if c.Name == name {
				return c.Image
			}
		}
	}
	return ""
}

// oneLine collapses every run of white space in s, line breaks included,
// to one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
