#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where the time of one qrita.torch call goes, layer by layer, on a GPU.

    python3 perf/binding_cost.py [--batches 1,64] [--vocab 128256] [--calls 200]
                                 [--json OUT]

For the mask (k = 50, p = 0.9 as per-row tensors, with a workspace) on
randn rows, each layer is called with the device idle (the input restored
and the stream synchronised before every call, untimed), and timed twice:
the host's time inside the call (time.perf_counter) and the latency from a
CUDA event recorded before the call to one recorded after it, which adds
the kernels' run time to whatever part of the host's time comes before the
first launch. Medians over --calls calls. The layers, from the inside out:

  extension   _qrita.mask_ on array descriptions made beforehand: nanobind,
              the C++ checks, the plan, the kernel launches
  op body     the custom op's Python body: the descriptions, the stream, the
              extension
  torch.ops   torch.ops.qrita.top_k_top_p_mask_: the dispatcher and
              torch.library's custom-op machinery around the body
  public      qrita.torch.top_k_top_p_mask_: the argument checks, then the
              eager call
  graph       the public call captured in a CUDA graph, replayed

Then torch.profiler lists the kernels of one public call and their device
time, the floor under every layer's latency, and the CUDA API calls the
host made in it, with their host time.
"""

import argparse
import json
import statistics
import sys
import time

import torch


def timed(call, restore, calls):
    host, latency = [], []
    for _ in range(calls):
        restore()
        torch.cuda.synchronize()
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        t0 = time.perf_counter()
        call()
        t1 = time.perf_counter()
        b.record()
        b.synchronize()
        host.append((t1 - t0) * 1e6)
        latency.append(a.elapsed_time(b) * 1e3)
    return statistics.median(host), statistics.median(latency)


def kernels_of(call, restore):
    restore()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        call()
        torch.cuda.synchronize()
    kernels, runtime = [], []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels.append((e.name, e.device_time))
        elif e.name.startswith("cu"):  # the CUDA runtime and driver calls (CUPTI)
            runtime.append((e.name, e.cpu_time))
    return kernels, runtime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batches", default="1,64")
    ap.add_argument("--vocab", type=int, default=128256)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("binding_cost.py needs a GPU that torch.cuda can use")
    import qrita.torch as qt
    from qrita import _qrita
    from qrita._arrays import torch_desc

    dev = torch.device("cuda")
    batches = [int(b) for b in args.batches.split(",")]
    gen = torch.Generator(device=dev).manual_seed(0)
    results = []
    for batch in batches:
        pristine = torch.randn(batch, args.vocab, generator=gen, device=dev)
        x = torch.empty_like(pristine)
        k = torch.full((batch,), 50, dtype=torch.int32, device=dev)
        p = torch.full((batch,), 0.9, dtype=torch.float32, device=dev)
        ws = qt.Workspace(batch, args.vocab)
        wst = ws.tensor
        stream = torch.cuda.current_stream().cuda_stream
        dx, dk, dp, dw = (torch_desc(t) for t in (x, k, p, wst))

        def restore():
            x.copy_(pristine)

        layers = {
            "extension": lambda: _qrita.mask_(dx, dk, dp, None, None, dw, stream),
            "op body": lambda: _qrita.mask_(torch_desc(x), torch_desc(k), torch_desc(p), None,
                                            None, torch_desc(wst),
                                            torch.cuda.current_stream(x.device).cuda_stream),
            "torch.ops": lambda: torch.ops.qrita.top_k_top_p_mask_(x, k, p, None, None, wst),
            "public": lambda: qt.top_k_top_p_mask_(x, k, p, workspace=ws),
        }
        for name, call in layers.items():
            for _ in range(5):  # warm-up: Kokkos, the stream's instance, caches
                restore()
                call()
            torch.cuda.synchronize()
            host, lat = timed(call, restore, args.calls)
            results.append({"batch": batch, "layer": name, "host_us": host, "latency_us": lat})
            print(f"B={batch:5d} {name:10s} host {host:8.1f} us  latency {lat:8.1f} us",
                  flush=True)
        graph = torch.cuda.CUDAGraph()
        restore()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            qt.top_k_top_p_mask_(x, k, p, workspace=ws)
        torch.cuda.current_stream().wait_stream(s)
        # Captured on the stream of the warm-up call: qrita makes a stream's
        # execution-space instance on the stream's first call, outside capture.
        with torch.cuda.graph(graph, stream=s):
            qt.top_k_top_p_mask_(x, k, p, workspace=ws)
        host, lat = timed(graph.replay, restore, args.calls)
        results.append({"batch": batch, "layer": "graph", "host_us": host, "latency_us": lat})
        print(f"B={batch:5d} {'graph':10s} host {host:8.1f} us  latency {lat:8.1f} us", flush=True)
        ks, api = kernels_of(layers["public"], restore)
        total = sum(t for _, t in ks)
        print(f"B={batch:5d} kernels of one public call: {len(ks)}, device time {total:.1f} us")
        for name, t in ks:
            print(f"           {t:8.1f} us  {name[:100]}")
        print(f"B={batch:5d} CUDA API calls of one public call (host time):")
        for name, t in api:
            print(f"           {t:8.1f} us  {name[:100]}")
        results.append({"batch": batch, "layer": "kernels", "count": len(ks),
                        "device_us": total, "kernels": [[n, t] for n, t in ks],
                        "api": [[n, t] for n, t in api]})
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "vocab": args.vocab,
                       "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()
