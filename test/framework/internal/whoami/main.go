// Command whoami is a test helper for the component Runner of
// test/framework: a stand-in for a project component that reports how the
// Runner started it.
//
// It loads its client configuration the way the project's components do
// (KUBECONFIG), asks the API server who it is (SelfSubjectReview) and writes
// the answer, its arguments, its PID, the value of $WHOAMI_VALUE, the contents
// of the file named by --file and the address it listens on into the ConfigMap
// named by $WHOAMI_CONFIGMAP in namespace $POD_NAMESPACE. It rewrites the
// ConfigMap whenever the file changes and exits 0 on SIGTERM, or with
// --exit-code right after the first report.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	code, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "whoami:", err)
		code = 1
	}
	os.Exit(code)
}

// run reports and then keeps the report current until SIGTERM. It returns the
// exit code asked for with --exit-code, else 0.
func run() (int, error) {
	fs := flag.NewFlagSet("whoami", flag.ContinueOnError)
	tag := fs.String("tag", "", "a value reported as is")
	file := fs.String("file", "", "a file whose contents are reported and watched")
	listen := fs.String("metrics-bind-address", "0", "address to listen on; 0 disables")
	exitCode := fs.Int("exit-code", -1, "exit with this code after the first report")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 0, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return 0, fmt.Errorf("load KUBECONFIG %q: %w", os.Getenv("KUBECONFIG"), err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("SelfSubjectReview: %w", err)
	}
	data := map[string]string{
		"user":  review.Status.UserInfo.Username,
		"args":  strings.Join(os.Args[1:], " "),
		"tag":   *tag,
		"value": os.Getenv("WHOAMI_VALUE"),
		"pod":   os.Getenv("POD_NAME"),
		"pid":   strconv.Itoa(os.Getpid()),
		"env":   inClusterEnv(),
	}
	if *listen != "0" && *listen != "" {
		l, err := net.Listen("tcp", *listen)
		if err != nil {
			return 0, fmt.Errorf("listen on %s: %w", *listen, err)
		}
		defer l.Close()
		data["listen"] = l.Addr().String()
	}
	namespace, name := os.Getenv("POD_NAMESPACE"), os.Getenv("WHOAMI_CONFIGMAP")
	last := "\x00"
	for {
		if *file != "" {
			b, err := os.ReadFile(*file)
			if err != nil {
				b = []byte("error: " + err.Error())
			}
			data["file"] = string(b)
		}
		if data["file"] != last {
			if err := report(ctx, cs, namespace, name, data); err != nil {
				return 0, err
			}
			last = data["file"]
			fmt.Printf("reported %v\n", data)
		}
		if *exitCode >= 0 {
			fmt.Fprintf(os.Stderr, "whoami: exiting with code %d as asked\n", *exitCode)
			return *exitCode, nil
		}
		select {
		case <-ctx.Done():
			fmt.Println("terminating")
			return 0, nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// inClusterEnv lists the in-cluster Service variables present, which the
// Runner must never set.
func inClusterEnv() string {
	var found []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "KUBERNETES_SERVICE_") || strings.HasPrefix(kv, "KUBERNETES_PORT") {
			found = append(found, kv)
		}
	}
	return strings.Join(found, ",")
}

// report creates or updates the ConfigMap namespace/name with data.
func report(ctx context.Context, cs kubernetes.Interface, namespace, name string, data map[string]string) error {
	cms := cs.CoreV1().ConfigMaps(namespace)
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return fmt.Errorf("get ConfigMap %s/%s: %w", namespace, name, err)
	}
	cm.Data = data
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update ConfigMap %s/%s: %w", namespace, name, err)
	}
	return nil
}
