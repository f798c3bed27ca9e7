package deploystatus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const (
	testNamespace = "open-cluster-management-agent"
	testImage     = "quay.io/kubectl-ocm/ocm-controller:does-not-exist"
)

var testKey = types.NamespacedName{Namespace: testNamespace, Name: "klusterlet-agent"}

// agentDeployment returns the Deployment of testKey, one replica updated
// and not available.
func agentDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: testKey.Namespace, Name: testKey.Name, Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
		},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability.",
		}}},
	}
}

// pod returns Pod name of the agent Deployment, created age ago, changed by
// each of mutate.
func pod(name string, age time.Duration, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name, UID: types.UID(name), Labels: map[string]string{"app": "agent"},
			CreationTimestamp: metav1.NewTime(time.Now().Add(-age).Truncate(time.Second))},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: testImage}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

// waiting sets the agent container waiting for reason.
func waiting(reason, msg string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: "agent", Image: testImage, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}})
	}
}

// exited sets the last termination of the agent container and its restarts.
func exited(code int32, reason string, restarts int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		s := &p.Status.ContainerStatuses[len(p.Status.ContainerStatuses)-1]
		s.RestartCount = restarts
		s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}
	}
}

// logServer serves the pods/log subresource: log for every container, or
// status code when not 200. It counts the requests and keeps the last query.
type logServer struct {
	log       string
	status    int
	requests  atomic.Int32
	lastQuery atomic.Value
}

// client returns a core/v1 client of s.
func (s *logServer) client(t *testing.T) corev1client.PodsGetter {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.lastQuery.Store(r.URL.RawQuery)
		if !strings.HasSuffix(r.URL.Path, "/log") {
			http.NotFound(w, r)
			return
		}
		if s.status != 0 && s.status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(s.status)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":%d,"message":"pods \"x\" is forbidden"}`, s.status)
			return
		}
		fmt.Fprint(w, s.log)
	}))
	t.Cleanup(srv.Close)
	c, err := corev1client.NewForConfig(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	return c
}

// newScheme returns a scheme with the core and apps types.
func newScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	return s
}

func TestInspect(t *testing.T) {
	crashLog := "I0101 starting\n" + strings.Repeat("noise\n", 20) + "E0101 cannot read Secret: bad kubeconfig\nError: exit\n"
	tests := []struct {
		name        string
		pods        []client.Object
		log         string
		wantReason  string
		wantSummary []string
		wantFix     string
		wantLogs    []string
		wantQuery   string
	}{
		{name: "an image that cannot be pulled names the image and the fix",
			pods:       []client.Object{pod("a", time.Minute, waiting(ReasonImagePullBackOff, `Back-off pulling image "`+testImage+`"`))},
			wantReason: ReasonImagePullBackOff,
			wantSummary: []string{"Pod open-cluster-management-agent/a, container agent: ImagePullBackOff for image " + testImage,
				`Back-off pulling image`},
			wantFix: "pass --image-registry"},
		{name: "a crash loop names the last exit and the last log lines of the previous run",
			pods:        []client.Object{pod("a", time.Minute, waiting(ReasonCrashLoopBackOff, "back-off 20s restarting failed container"), exited(1, "Error", 3))},
			log:         crashLog,
			wantReason:  ReasonCrashLoopBackOff,
			wantSummary: []string{"container agent: CrashLoopBackOff; last exit code 1 (Error) after 3 restarts"},
			wantFix:     "`kubectl logs -n open-cluster-management-agent a -c agent --previous`",
			wantLogs:    []string{"noise", "noise", "noise", "noise", "noise", "noise", "E0101 cannot read Secret: bad kubeconfig", "Error: exit"},
			wantQuery:   "previous=true"},
		{name: "a container that exited again after restarts is a crash loop, named with its own log",
			pods: []client.Object{pod("a", time.Minute, func(p *corev1.Pod) {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", RestartCount: 2, State: corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
			})},
			log:         "Error: bad kubeconfig\n",
			wantReason:  ReasonCrashLoopBackOff,
			wantSummary: []string{"container agent: CrashLoopBackOff; last exit code 1 (Error) after 2 restarts"},
			wantFix:     "`kubectl logs -n open-cluster-management-agent a -c agent`",
			wantLogs:    []string{"Error: bad kubeconfig"},
			wantQuery:   "tailLines=8"},
		{name: "a container that just exited is named with its own log",
			pods: []client.Object{pod("a", time.Minute, func(p *corev1.Pod) {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", State: corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}}
			})},
			log:         "panic: boom\n",
			wantReason:  "Error",
			wantSummary: []string{"container agent: terminated with exit code 2 (Error)"},
			wantFix:     "`kubectl logs -n open-cluster-management-agent a -c agent`",
			wantLogs:    []string{"panic: boom"},
			wantQuery:   "tailLines=8"},
		{name: "a container killed for its memory names the limit",
			pods:       []client.Object{pod("a", time.Minute, waiting(ReasonCrashLoopBackOff, ""), exited(137, ReasonOOMKilled, 1))},
			wantReason: ReasonCrashLoopBackOff, wantSummary: []string{"last exit code 137 (OOMKilled) after 1 restarts"},
			wantFix: "raise the container's memory limit"},
		{name: "an unschedulable Pod names the scheduler's message",
			pods: []client.Object{pod("a", time.Minute, func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: ReasonUnschedulable,
					Message: "0/1 nodes are available: 1 Insufficient memory."}}
			})},
			wantReason:  ReasonUnschedulable,
			wantSummary: []string{"Pod open-cluster-management-agent/a: Unschedulable: 0/1 nodes are available: 1 Insufficient memory."},
			wantFix:     "free or add capacity"},
		{name: "a missing Secret names the kubelet's message",
			pods:       []client.Object{pod("a", time.Minute, waiting(ReasonCreateContainerConfigError, `secret "x" not found`))},
			wantReason: ReasonCreateContainerConfigError, wantSummary: []string{`CreateContainerConfigError: secret "x" not found`},
			wantFix: "create what the message names"},
		{name: "the newest Pod is named; a terminating one is passed over",
			pods: []client.Object{
				pod("old", time.Hour, waiting(ReasonErrImagePull, "old")),
				pod("new", time.Minute, waiting(ReasonImagePullBackOff, "new")),
				pod("going", time.Second, waiting(ReasonErrImagePull, "going"), func(p *corev1.Pod) {
					p.DeletionTimestamp, p.Finalizers = ptr.To(metav1.Now()), []string{"x"}
				}),
			},
			wantReason: ReasonImagePullBackOff, wantSummary: []string{"Pod open-cluster-management-agent/new"}, wantFix: "pass --image-registry"},
		{name: "a Pod still starting shows no cause",
			pods: []client.Object{pod("a", time.Minute, waiting("ContainerCreating", ""))}},
		{name: "another Deployment's Pod is not looked at",
			pods: []client.Object{pod("a", time.Minute, waiting(ReasonErrImagePull, ""), func(p *corev1.Pod) { p.Labels = map[string]string{"app": "other"} })}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logServer{log: tt.log}
			c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(append(tt.pods, agentDeployment())...).Build()
			in := NewInspector(c, logs.client(t))
			in.ImageFix = "check the image name, pass --image-registry <registry> to pull from a mirror, or load the image into the nodes"
			r, err := in.Read(t.Context(), testKey)
			require.NoError(t, err)
			require.NotNil(t, r)
			assert.False(t, r.Done)
			if tt.wantReason == "" {
				assert.Nil(t, r.Cause)
				assert.Nil(t, in.Last(testKey))
				assert.Equal(t, "Deployment open-cluster-management-agent/klusterlet-agent: 0 of 1 updated replicas available (MinimumReplicasUnavailable: Deployment does not have minimum availability.)", r.String())
				return
			}
			require.NotNil(t, r.Cause)
			assert.Equal(t, tt.wantReason, r.Cause.Reason)
			for _, w := range tt.wantSummary {
				assert.Contains(t, r.Cause.Summary(), w)
			}
			assert.Contains(t, r.Cause.Fix, tt.wantFix)
			assert.Equal(t, tt.wantLogs, r.Cause.Logs)
			assert.Contains(t, r.String(), r.Cause.Summary()+"; to fix: "+r.Cause.Fix)
			assert.Same(t, r.Cause, in.Last(testKey))
			for _, l := range tt.wantLogs {
				assert.Contains(t, r.Cause.Detail(), "\n    "+l)
			}
			if tt.wantQuery != "" {
				assert.Contains(t, logs.lastQuery.Load(), tt.wantQuery)
				assert.Contains(t, logs.lastQuery.Load(), "container=agent")
			}
		})
	}
}

func TestInspectLogsOncePerRun(t *testing.T) {
	logs := &logServer{log: "Error: exit\n"}
	p := pod("a", time.Minute, waiting(ReasonCrashLoopBackOff, ""), exited(1, "Error", 1))
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(p, agentDeployment()).Build()
	in := NewInspector(c, logs.client(t))
	for range 3 {
		_, err := in.Read(t.Context(), testKey)
		require.NoError(t, err)
	}
	assert.EqualValues(t, 1, logs.requests.Load(), "log reads of one run")
	p.Status.ContainerStatuses[0].RestartCount = 2
	require.NoError(t, c.Status().Update(t.Context(), p))
	_, err := in.Read(t.Context(), testKey)
	require.NoError(t, err)
	assert.EqualValues(t, 2, logs.requests.Load(), "log reads after a restart")
}

func TestInspectWithoutRights(t *testing.T) {
	crash := pod("a", time.Minute, waiting(ReasonCrashLoopBackOff, ""), exited(1, "Error", 1))
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))

	t.Run("without the right to list Pods, the Deployment's own status is named, and Pods are not asked again", func(t *testing.T) {
		lists := 0
		c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(crash, agentDeployment()).WithInterceptorFuncs(interceptor.Funcs{
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				lists++
				return forbidden
			},
		}).Build()
		in := NewInspector(c, nil)
		for range 2 {
			r, err := in.Read(t.Context(), testKey)
			require.NoError(t, err)
			assert.Nil(t, r.Cause)
			assert.Contains(t, r.String(), "0 of 1 updated replicas available")
		}
		assert.Equal(t, 1, lists)
		assert.Equal(t, errors.New("timed out"), in.Explain(errors.New("timed out")))
	})

	t.Run("without the right to read logs, the cause is named without its lines", func(t *testing.T) {
		logs := &logServer{status: http.StatusForbidden}
		c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(crash, agentDeployment()).Build()
		in := NewInspector(c, logs.client(t))
		for range 2 {
			r, err := in.Read(t.Context(), testKey)
			require.NoError(t, err)
			require.NotNil(t, r.Cause)
			assert.Equal(t, ReasonCrashLoopBackOff, r.Cause.Reason)
			assert.Empty(t, r.Cause.Logs)
			assert.Contains(t, r.Cause.Detail(), "Its log could not be read: no right to read pods/log in namespace open-cluster-management-agent")
			assert.Contains(t, r.Cause.Detail(), "kubectl logs -n open-cluster-management-agent a -c agent --previous")
		}
		assert.EqualValues(t, 1, logs.requests.Load())
	})
}

func TestExplain(t *testing.T) {
	p := pod("a", time.Minute, waiting(ReasonCrashLoopBackOff, "back-off"), exited(1, "Error", 2))
	dep := agentDeployment()
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(p, dep).Build()
	in := NewInspector(c, (&logServer{log: "line 1\nline 2\n"}).client(t))
	assert.NoError(t, in.Explain(nil))
	timeout := errors.New("timed out after 1m0s waiting for cluster c1 to join")
	assert.Equal(t, timeout, in.Explain(timeout), "no cause seen yet")

	_, err := in.Read(t.Context(), testKey)
	require.NoError(t, err)
	// The Pod recovers, the Deployment is not ready yet: the cause seen stays.
	require.NoError(t, c.Delete(t.Context(), p))
	_, err = in.Read(t.Context(), testKey)
	require.NoError(t, err)
	got := in.Explain(timeout)
	require.ErrorIs(t, got, timeout)
	assert.Equal(t, timeout.Error()+`
The last Pod-level cause seen of Deployment open-cluster-management-agent/klusterlet-agent: Pod open-cluster-management-agent/a, container agent: CrashLoopBackOff; last exit code 1 (Error) after 2 restarts
Last log lines of container agent:
    line 1
    line 2
To fix: its log says why it exits: see the log lines, or `+"`kubectl logs -n open-cluster-management-agent a -c agent --previous`", got.Error())

	// Once the Deployment is ready, its cause is forgotten.
	dep.Status.AvailableReplicas = 1
	require.NoError(t, c.Status().Update(t.Context(), dep))
	r, err := in.Read(t.Context(), testKey)
	require.NoError(t, err)
	assert.True(t, r.Done)
	assert.Equal(t, timeout, in.Explain(timeout))
}

func TestReadMissing(t *testing.T) {
	in := NewInspector(fake.NewClientBuilder().WithScheme(newScheme(t)).Build(), nil)
	r, err := in.Read(t.Context(), testKey)
	require.NoError(t, err)
	assert.Nil(t, r)
}

func TestLastLines(t *testing.T) {
	long := strings.Repeat("x", maxLogLine+10)
	assert.Equal(t, []string{"b", "c"}, lastLines("a\n\nb\r\nc\n", 2))
	assert.Equal(t, []string{strings.Repeat("x", maxLogLine) + "..."}, lastLines(long, 5))
	assert.Empty(t, lastLines("", 5))
}
