// Command kbload loads the test bed for the scale measurement
// (test/bench/k8s_scale.sh): it makes KWOK nodes and gangs concurrently,
// waits for pods to be bound, and measures the API server's own ceiling
// for binds by binding pre-created pods as fast as the server accepts
// them, with nothing else in the way.
//
//	kbload -kubeconfig F nodes -n 1000 -cpu 32
//	kbload -kubeconfig F gangs -n 1000 -size 10 -scheduler kbatch
//	kbload -kubeconfig F wait-bound -n 10000
//	kbload -kubeconfig F bind
//
// Every command prints one line of key=value figures on stdout.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	kubeconfig = flag.String("kubeconfig", "", "admin kubeconfig of the bed")
	workers    = flag.Int("workers", 64, "requests in flight")
)

func main() {
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: kbload -kubeconfig F nodes|gangs|wait-bound|bind [flags]")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	cfg.QPS = -1 // no client-side limit: the server is what is measured
	cfg.Burst = 0
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	cmd, args := flag.Arg(0), flag.Args()[1:]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	n := fs.Int("n", 0, "how many")
	cpu := fs.String("cpu", "1", "cpu per node or per pod")
	size := fs.Int("size", 10, "pods per gang")
	sched := fs.String("scheduler", "kbatch", "schedulerName of the pods")
	queue := fs.String("queue", "default", "queue of the PodGroups")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long wait-bound waits")
	_ = fs.Parse(args)
	ctx := context.Background()
	switch cmd {
	case "nodes":
		nodes(ctx, cs, *n, *cpu)
	case "gangs":
		gangs(ctx, cs, dyn, *n, *size, *cpu, *sched, *queue)
	case "wait-bound":
		waitBound(ctx, cs, *n, *timeout)
	case "bind":
		bindAll(ctx, cs)
	default:
		fmt.Fprintf(os.Stderr, "kbload: unknown command %q\n", cmd)
		os.Exit(2)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kbload:", err)
	os.Exit(1)
}

// parallel runs do(0..n-1) on *workers goroutines; the first error ends it.
func parallel(n int, do func(i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		fail(first)
	}
}

func nodes(ctx context.Context, cs *kubernetes.Clientset, n int, cpu string) {
	q := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	start := time.Now()
	parallel(n, func(i int) error {
		name := fmt.Sprintf("node-%d", i+1)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			},
			Status: corev1.NodeStatus{Capacity: q, Allocatable: q},
		}
		_, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		return err
	})
	fmt.Printf("nodes=%d seconds=%.2f\n", n, time.Since(start).Seconds())
}

func gangs(ctx context.Context, cs *kubernetes.Clientset, dyn dynamic.Interface, n, size int, cpu, sched, queue string) {
	pgs := dyn.Resource(schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}).Namespace("default")
	start := time.Now()
	parallel(n, func(g int) error {
		name := fmt.Sprintf("g%05d", g)
		pg := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "scheduling.volcano.sh/v1beta1",
			"kind":       "PodGroup",
			"metadata":   map[string]any{"name": name, "namespace": "default"},
			"spec":       map[string]any{"minMember": int64(size), "queue": queue},
		}}
		if _, err := pgs.Create(ctx, pg, metav1.CreateOptions{}); err != nil {
			return err
		}
		for i := 0; i < size; i++ {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name:        fmt.Sprintf("%s-%d", name, i),
					Namespace:   "default",
					Annotations: map[string]string{"scheduling.k8s.io/group-name": name},
				},
				Spec: corev1.PodSpec{
					SchedulerName: sched,
					Containers: []corev1.Container{{
						Name:      "c",
						Image:     "x",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
					}},
				},
			}
			if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		return nil
	})
	fmt.Printf("gangs=%d pods=%d seconds=%.2f\n", n, n*size, time.Since(start).Seconds())
}

// waitBound polls until n pods have a node, printing how long that took.
func waitBound(ctx context.Context, cs *kubernetes.Clientset, n int, timeout time.Duration) {
	start := time.Now()
	for {
		list, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			fail(err)
		}
		bound := 0
		for i := range list.Items {
			if list.Items[i].Spec.NodeName != "" {
				bound++
			}
		}
		if bound >= n {
			fmt.Printf("bound=%d seconds=%.2f\n", bound, time.Since(start).Seconds())
			return
		}
		if time.Since(start) > timeout {
			fmt.Printf("bound=%d seconds=%.2f timeout=true\n", bound, time.Since(start).Seconds())
			os.Exit(1)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// bindAll binds every pod without a node, round-robin over the nodes: the
// server's ceiling for binds, with no scheduling in the way.
func bindAll(ctx context.Context, cs *kubernetes.Clientset) {
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		fail(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		fail(err)
	}
	var todo []*corev1.Pod
	for i := range pods.Items {
		if pods.Items[i].Spec.NodeName == "" {
			todo = append(todo, &pods.Items[i])
		}
	}
	if len(nodes.Items) == 0 {
		fail(fmt.Errorf("no nodes"))
	}
	start := time.Now()
	parallel(len(todo), func(i int) error {
		p := todo[i]
		b := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: nodes.Items[i%len(nodes.Items)].Name},
		}
		return cs.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{})
	})
	s := time.Since(start).Seconds()
	fmt.Printf("binds=%d seconds=%.2f binds_per_second=%.0f workers=%d\n", len(todo), s, float64(len(todo))/s, *workers)
}
