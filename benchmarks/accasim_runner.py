"""Run AccaSim 1.1.3 EASYBackfilling(FirstFit()) on an SWF file; print JSON timings.

Executed by ``bench_replay.py`` with AccaSim's own interpreter (AccaSim lives in a separate
virtual environment: it pins old dependencies and needs a patch to import on Python >= 3.10).
Usage: python accasim_runner.py TRACE.swf NODES CORES_PER_NODE WORKDIR
"""

import json
import os
import sys
import time

from _harness import peak_rss_mb


def main() -> None:
    trace, nodes, cores, workdir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    from accasim.base.allocator_class import FirstFit
    from accasim.base.scheduler_class import EASYBackfilling
    from accasim.base.simulator_class import Simulator

    config = os.path.join(workdir, "sys_config.json")
    with open(config, "w") as fh:  # one SWF processor = one core, as AccaSim's SWF reader maps it
        json.dump({"groups": {"g0": {"core": cores}}, "resources": {"g0": nodes},
                   "equivalence": {"processor": {"core": 1}}, "start_time": 0}, fh)
    dispatcher = EASYBackfilling(FirstFit())
    t0 = time.perf_counter()
    c0 = time.process_time()
    sim = Simulator(trace, config, dispatcher, RESULTS_FOLDER_PATH=os.path.join(workdir, "results"),
                    scheduling_output=False, statistics_output=False, show_statistics=False,
                    pprint_output=False, benchmark_output=False)
    sim.start_simulation()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_mb = peak_rss_mb()
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "peak_mb": peak_mb,
                      "loaded": sim.loaded_jobs, "dispatched": sim.dispatched_jobs,
                      "rejected": sim.rejected_jobs}))


if __name__ == "__main__":
    main()
