package framework

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// startWithKept starts an environment of one cluster, stopped when t ends,
// holding a Namespace "kept" that a restart must not lose.
func startWithKept(t *testing.T) (*Environment, *Cluster, kubernetes.Interface) {
	t.Helper()
	env, err := Start(t.Context(), Options{Clusters: []string{"one"}, Log: testWriter{t}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	c := env.Cluster("one")
	cs := c.Clientset()
	_, err = cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return env, c, cs
}

func TestRestartEtcd(t *testing.T) {
	SkipIfShort(t)
	env, c, cs := startWithKept(t)
	etcdBefore, apiserver, url := env.etcd.Pid(), c.apiserver.Pid(), env.etcdURL

	require.NoError(t, env.RestartEtcd(t.Context()))
	assert.ErrorIs(t, syscall.Kill(etcdBefore, 0), syscall.ESRCH, "the old etcd still runs")
	assert.Equal(t, url, env.etcdURL, "etcd moved")
	// The API server keeps running and reconnects on its own.
	Eventually(t.Context(), t, time.Minute, "the API server to write through the restarted etcd", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
		return err == nil, nil
	})
	_, err := cs.CoreV1().Namespaces().Get(t.Context(), "kept", metav1.GetOptions{})
	require.NoError(t, err, "an object written before the restart is gone")
	assert.Equal(t, apiserver, c.apiserver.Pid(), "the API server was restarted")
	exited, _ := c.apiserver.Exited()
	assert.False(t, exited, "the API server exited when etcd restarted")

	etcdAfter := env.etcd.Pid()
	require.NoError(t, env.Stop())
	assert.ErrorIs(t, syscall.Kill(etcdAfter, 0), syscall.ESRCH, "Stop left the restarted etcd running")
}

// echoServer serves lines back on a loopback port until t ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends one line on c and reads it back.
func roundTrip(c net.Conn, msg string) error {
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(c, msg); err != nil {
		return err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if got != msg+"\n" {
		return fmt.Errorf("read %q, want %q", got, msg)
	}
	return nil
}

func TestProxy(t *testing.T) {
	p := StartProxyForTest(t, echoServer(t))

	open, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer open.Close()
	require.NoError(t, roundTrip(open, "before"), "the proxy does not forward")

	p.Block()
	assert.Error(t, roundTrip(open, "cut"), "Block left an open connection working")
	during, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err, "the port stays open while blocked")
	assert.Error(t, roundTrip(during, "blocked"), "a connection made while blocked reached the target")
	_ = during.Close()

	p.Unblock()
	after, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer after.Close()
	require.NoError(t, roundTrip(after, "after"), "the proxy does not forward after Unblock")

	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "Close twice")
	_, err = net.Dial("tcp", p.Addr())
	assert.Error(t, err, "the proxy still listens after Close")
}
