// Command kbpeers is the measuring side of the peers benchmark
// (test/bench/peers.sh): it makes pods that belong to no PodGroup, watches
// the binds of a run, and checks the end state (gangs left partly bound,
// nodes over-committed, which gangs ran). kbload (test/k8s/cmd/kbload)
// makes the nodes and the gangs.
//
//	kbpeers -kubeconfig F pods -n 10000 -cpu 1 -scheduler S
//	kbpeers -kubeconfig F watch -n 10000 -quiet 30s -timeout 10m
//	kbpeers -kubeconfig F check
//
// pods and watch print one line of key=value figures; check prints one
// JSON object.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	kubeconfig = flag.String("kubeconfig", "", "admin kubeconfig of the bed")
	workers    = flag.Int("workers", 64, "requests in flight")
)

const groupAnnotation = "scheduling.k8s.io/group-name"

func main() {
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: kbpeers -kubeconfig F pods|watch|check [flags]")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	cfg.QPS = -1
	cfg.Burst = 0
	cs := kubernetes.NewForConfigOrDie(cfg)
	cmd, args := flag.Arg(0), flag.Args()[1:]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	n := fs.Int("n", 0, "how many pods")
	cpu := fs.String("cpu", "1", "cpu per pod")
	sched := fs.String("scheduler", "kbatch", "schedulerName of the pods")
	quiet := fs.Duration("quiet", 30*time.Second, "a steady state: no bind for this long")
	timeout := fs.Duration("timeout", 15*time.Minute, "how long watch waits at most")
	_ = fs.Parse(args)
	ctx := context.Background()
	switch cmd {
	case "pods":
		pods(ctx, cs, *n, *cpu, *sched)
	case "watch":
		watch(ctx, cs, *n, *quiet, *timeout)
	case "check":
		check(ctx, cs, dynamic.NewForConfigOrDie(cfg))
	default:
		fmt.Fprintf(os.Stderr, "kbpeers: unknown command %q\n", cmd)
		os.Exit(2)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kbpeers:", err)
	os.Exit(1)
}

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

// pods makes n pods of one container each, in no PodGroup: the same pod
// as kbload's gangs make, without the group annotation.
func pods(ctx context.Context, cs *kubernetes.Clientset, n int, cpu, sched string) {
	start := time.Now()
	parallel(n, func(i int) error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%05d", i), Namespace: "default"},
			Spec: corev1.PodSpec{
				SchedulerName: sched,
				Containers: []corev1.Container{{
					Name:      "c",
					Image:     "x",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
				}},
			},
		}
		_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	fmt.Printf("pods=%d seconds=%.2f\n", n, time.Since(start).Seconds())
}

// watch follows the pods from before the load starts and ends when n pods
// are bound, or when nothing was bound (nor created) for quiet: a steady
// state. It prints when the last bind was seen, as Unix seconds.
func watch(ctx context.Context, cs *kubernetes.Clientset, n int, quiet, timeout time.Duration) {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
	inf := f.Core().V1().Pods().Informer()
	_ = inf.SetTransform(func(o any) (any, error) {
		if p, ok := o.(*corev1.Pod); ok {
			p.ManagedFields = nil
		}
		return o, nil
	})
	var mu sync.Mutex
	bound := map[string]bool{}
	seen := map[string]bool{}
	start := time.Now()
	var lastBind, lastChange, firstSeen time.Time
	lastChange = start
	note := func(o any) {
		p, ok := o.(*corev1.Pod)
		if !ok {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		k := p.Name
		if !seen[k] {
			seen[k] = true
			lastChange = now
			if firstSeen.IsZero() {
				firstSeen = now
			}
		}
		if p.Spec.NodeName != "" && !bound[k] {
			bound[k] = true
			lastBind, lastChange = now, now
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    note,
		UpdateFunc: func(_, o any) { note(o) },
	})
	stop := make(chan struct{})
	f.Start(stop)
	f.WaitForCacheSync(stop)
	fmt.Println("watching")
	reason := "timeout"
	for time.Since(start) < timeout {
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		b, lc, sn := len(bound), lastChange, len(seen)
		mu.Unlock()
		if n > 0 && b >= n {
			reason = "all"
			break
		}
		if sn > 0 && time.Since(lc) >= quiet {
			reason = "steady"
			break
		}
	}
	close(stop)
	mu.Lock()
	defer mu.Unlock()
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "0"
		}
		return fmt.Sprintf("%.3f", float64(t.UnixNano())/1e9)
	}
	fmt.Printf("bound=%d pods=%d end=%s first_seen=%s last_bind=%s\n", len(bound), len(seen), reason, ts(firstSeen), ts(lastBind))
}

type result struct {
	Bound              int      `json:"bound"`
	Pods               int      `json:"pods"`
	Gangs              int      `json:"gangs"`
	PartialGangs       int      `json:"partialGangs"`
	OvercommittedNodes int      `json:"overcommittedNodes"`
	GangsRun           []string `json:"gangsRun"`
}

// check reads the end state: every pod's node, every PodGroup's
// minMember, every node's allocatable cpu.
func check(ctx context.Context, cs *kubernetes.Clientset, dyn dynamic.Interface) {
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		fail(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		fail(err)
	}
	pgs, err := dyn.Resource(schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}).
		Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		fail(err)
	}
	var r result
	used := map[string]int64{}
	inGang := map[string]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		r.Pods++
		if p.Spec.NodeName == "" {
			continue
		}
		r.Bound++
		for _, c := range p.Spec.Containers {
			used[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
		}
		if g := p.Annotations[groupAnnotation]; g != "" {
			inGang[g]++
		}
	}
	for i := range nodes.Items {
		nd := &nodes.Items[i]
		if used[nd.Name] > nd.Status.Allocatable.Cpu().MilliValue() {
			r.OvercommittedNodes++
		}
	}
	r.GangsRun = []string{}
	for _, pg := range pgs.Items {
		r.Gangs++
		min, _, _ := unstructuredInt(pg.Object, "spec", "minMember")
		b := inGang[pg.GetName()]
		switch {
		case b >= int(min) && b > 0:
			r.GangsRun = append(r.GangsRun, pg.GetName())
		case b > 0:
			r.PartialGangs++
		}
	}
	sort.Strings(r.GangsRun)
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

func unstructuredInt(o map[string]any, path ...string) (int64, bool, error) {
	var cur any = o
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[k]
	}
	switch v := cur.(type) {
	case int64:
		return v, true, nil
	case float64:
		return int64(v), true, nil
	}
	return 0, false, nil
}
