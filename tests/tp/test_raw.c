/*
 * test_raw.c - a small trace of ftrace events and a SysStats packet with
 * what the recorded system traces lack (cpu_frequency, a legacy generic
 * event, a field past number 31, a field given twice, an event number
 * past the last known one, devfreq, cpufreq, interrupts, PSI, thermal
 * zones, unknown meminfo and vmstat keys, CPU times without their CPU,
 * CpuInfo with capacities, ARM identifiers and feature bits, buddy_info,
 * disk_stat, cpuidle_state, gpufreq_mhz, slab_info, a kernel function
 * field named by the sequence's kernel symbols and one it does not name,
 * common_flags beside a payload, which makes a row of no name and no
 * args: arg_set_id 0, whose args are those of the first arg set),
 * against what Perfetto v58.2's trace_processor_shell printed for the
 * same bytes (GPUPERF_RAW_OUT=FILE writes them, to run it again).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "perfetto/proto.h"
#include "tp/tputil.h"

/* FtraceEvent field numbers and payload fields used here
 * (ftrace_event.proto, sched.proto, power.proto, generic.proto). */
enum {
  EV_TS = 1,
  EV_PID = 2,
  EV_COMMON_FLAGS = 5,
  EV_SCHED_WAKEUP = 17, /* comm 1, pid 2, prio 3, success 4, target_cpu 5 */
  EV_CPU_FREQUENCY = 11,
  EV_CPU_IDLE = 13,
  EV_WORKQUEUE_QUEUE_WORK = 59, /* work 1, function 2 */
  EV_GENERIC = 327, /* event_name 1, field 2 {name 1, str 3, int 4, uint 5} */
  EV_UNKNOWN = 9000,
};
/* SysStats (sys_stats.proto). */
enum { PKT_SYS_STATS = 7, PKT_SYSTEM_INFO = 45, PKT_CPU_INFO = 67 };

static void event_begin(tg *t, uint64_t ts, uint32_t pid, uint32_t field) {
  gp__pb_begin(&t->w, GP_PB_FTRACE_BUNDLE_EVENT);
  gp__pb_uint(&t->w, EV_TS, ts);
  gp__pb_uint(&t->w, EV_PID, pid);
  gp__pb_begin(&t->w, field);
}

static void event_end(tg *t) {
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
}

static void kv(tg *t, uint32_t field, uint64_t key, uint64_t value) {
  gp__pb_begin(&t->w, field);
  gp__pb_uint(&t->w, 1, key);
  gp__pb_uint(&t->w, 2, value);
  gp__pb_end(&t->w);
}

/* A CpuInfo.Cpu (cpu_info.proto): processor 1, frequencies 2, capacity
 * 3 (0: none), arm_identifier 4 {implementer 1 .. revision 5}, features
 * 5. */
static void cpu_info_cpu(tg *t, const char *proc, uint32_t f0, uint32_t f1,
                         uint32_t capacity, bool arm, uint64_t features) {
  gp__pb_begin(&t->w, 1);
  gp__pb_string(&t->w, 1, proc);
  gp__pb_uint(&t->w, 2, f0);
  gp__pb_uint(&t->w, 2, f1);
  if (capacity)
    gp__pb_uint(&t->w, 3, capacity);
  if (arm) {
    gp__pb_begin(&t->w, 4);
    gp__pb_uint(&t->w, 1, 0x41);
    gp__pb_uint(&t->w, 2, 8);
    gp__pb_uint(&t->w, 4, 0xd05);
    gp__pb_end(&t->w);
  }
  if (features)
    gp__pb_uint(&t->w, 5, features);
  gp__pb_end(&t->w);
}

/* A SysStats.DiskStat of device "sda": read_sectors and read_time_ms as
 * given, the rest fixed. */
static void disk(tg *t, uint64_t sectors, uint64_t ms) {
  gp__pb_begin(&t->w, 13);
  gp__pb_string(&t->w, 1, "sda");
  gp__pb_uint(&t->w, 2, sectors);
  gp__pb_uint(&t->w, 3, ms);
  gp__pb_uint(&t->w, 4, 2048);
  gp__pb_uint(&t->w, 5, 0);
  gp__pb_uint(&t->w, 8, 3);
  gp__pb_end(&t->w);
}

static void build(tg *t) {
  /* SystemInfo.page_size (buddy_info and slab_info sizes) */
  tg_packet(t, 0, 3, 0);
  gp__pb_begin(&t->w, PKT_SYSTEM_INFO);
  gp__pb_uint(&t->w, 6, 16384);
  gp__pb_end(&t->w);
  tg_end(t);
  /* CPUs 0 and 2 of capacity 512, 1 of 1024; an empty CpuInfo */
  tg_packet(t, 500, 3, 0);
  gp__pb_begin(&t->w, PKT_CPU_INFO);
  cpu_info_cpu(t, "little", 300000, 1800000, 512, true, 3);
  cpu_info_cpu(t, "big", 300000, 2400000, 1024, false, 1u << 7);
  cpu_info_cpu(t, "little", 300000, 1800000, 512, true, 0);
  gp__pb_end(&t->w);
  tg_end(t);
  tg_packet(t, 600, 3, 0);
  gp__pb_begin(&t->w, PKT_CPU_INFO);
  gp__pb_end(&t->w);
  tg_end(t);

  /* kernel_symbols interned on the ftrace sequence: iid 1 only */
  tg_packet(t, 0, 1, 1 /* incremental state cleared */);
  gp__pb_begin(&t->w, 12);
  gp__pb_begin(&t->w, 26);
  gp__pb_uint(&t->w, 1, 1);
  gp__pb_string(&t->w, 2, "my_work_fn");
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  tg_end(t);

  tg_packet(t, 0, 1, 0);
  gp__pb_begin(&t->w, GP_PB_PACKET_FTRACE_EVENTS);
  gp__pb_uint(&t->w, GP_PB_FTRACE_BUNDLE_CPU, 1);
  /* a kernel function named, then one the sequence does not name */
  event_begin(t, 900, 10, EV_WORKQUEUE_QUEUE_WORK);
  gp__pb_uint(&t->w, 1, 7);
  gp__pb_uint(&t->w, 2, 1);
  event_end(t);
  event_begin(t, 950, 10, EV_WORKQUEUE_QUEUE_WORK);
  gp__pb_uint(&t->w, 1, 8);
  gp__pb_uint(&t->w, 2, 2);
  event_end(t);
  event_begin(t, 1000, 10, EV_CPU_FREQUENCY);
  gp__pb_uint(&t->w, 1, 1800000);
  gp__pb_uint(&t->w, 2, 3);
  event_end(t);
  event_begin(t, 1100, 10, EV_CPU_IDLE);
  gp__pb_uint(&t->w, 1, 4294967295u);
  gp__pb_uint(&t->w, 2, 0);
  event_end(t);
  event_begin(t, 1200, 11, EV_SCHED_WAKEUP);
  gp__pb_string(&t->w, 1, "wakee");
  gp__pb_uint(&t->w, 2, 12);
  gp__pb_uint(&t->w, 3, 120);
  gp__pb_uint(&t->w, 40, 7); /* past the 32 fields Perfetto reads */
  gp__pb_uint(&t->w, 2, 13); /* pid again: the last value wins */
  gp__pb_int(&t->w, 5, -1);
  event_end(t);
  event_begin(t, 1300, 11, EV_GENERIC);
  gp__pb_string(&t->w, 1, "my_event");
  gp__pb_begin(&t->w, 2);
  gp__pb_string(&t->w, 1, "a");
  gp__pb_int(&t->w, 4, -5);
  gp__pb_end(&t->w);
  gp__pb_begin(&t->w, 2);
  gp__pb_string(&t->w, 1, "b");
  gp__pb_uint(&t->w, 5, 7);
  gp__pb_end(&t->w);
  gp__pb_begin(&t->w, 2);
  gp__pb_string(&t->w, 1, "c");
  gp__pb_string(&t->w, 3, "x");
  gp__pb_end(&t->w);
  event_end(t);
  event_begin(t, 1400, 11, EV_UNKNOWN);
  gp__pb_uint(&t->w, 1, 1);
  event_end(t);
  /* common_flags alone: no payload, no event */
  gp__pb_begin(&t->w, GP_PB_FTRACE_BUNDLE_EVENT);
  gp__pb_uint(&t->w, EV_TS, 1500);
  gp__pb_uint(&t->w, EV_PID, 11);
  gp__pb_uint(&t->w, EV_COMMON_FLAGS, 3);
  gp__pb_end(&t->w);
  /* common_flags after a payload: a row of no name of its own */
  event_begin(t, 1600, 11, EV_CPU_IDLE);
  gp__pb_uint(&t->w, 1, 1);
  gp__pb_uint(&t->w, 2, 1);
  gp__pb_end(&t->w);
  gp__pb_uint(&t->w, EV_COMMON_FLAGS, 3);
  gp__pb_end(&t->w);
  /* no time: no event either */
  gp__pb_begin(&t->w, GP_PB_FTRACE_BUNDLE_EVENT);
  gp__pb_uint(&t->w, EV_PID, 11);
  gp__pb_begin(&t->w, EV_CPU_IDLE);
  gp__pb_uint(&t->w, 1, 2);
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);

  gp__pb_end(&t->w);
  tg_end(t);

  tg_packet(t, 2000, 2, 0);
  gp__pb_begin(&t->w, PKT_SYS_STATS);
  kv(t, 1, 1, 100);       /* meminfo MemTotal, kB */
  kv(t, 1, 99, 5);        /* an unknown meminfo key */
  kv(t, 2, 1, 3);         /* vmstat nr_free_pages */
  kv(t, 2, 999, 1);       /* an unknown vmstat key */
  gp__pb_begin(&t->w, 3); /* cpu_stat */
  gp__pb_uint(&t->w, 1, 1);
  gp__pb_uint(&t->w, 2, 50);
  gp__pb_uint(&t->w, 5, 70);
  gp__pb_end(&t->w);
  gp__pb_begin(&t->w, 3); /* cpu_stat without its cpu */
  gp__pb_uint(&t->w, 2, 50);
  gp__pb_end(&t->w);
  gp__pb_uint(&t->w, 4, 9);   /* num_forks */
  gp__pb_uint(&t->w, 5, 100); /* num_irq_total */
  kv(t, 6, 3, 4);             /* num_irq */
  gp__pb_uint(&t->w, 7, 6);   /* num_softirq_total */
  kv(t, 8, 1, 2);             /* num_softirq */
  gp__pb_begin(&t->w, 10);    /* devfreq */
  gp__pb_string(&t->w, 1, "gpufreq");
  gp__pb_uint(&t->w, 2, 500);
  gp__pb_end(&t->w);
  gp__pb_uint(&t->w, 11, 1000); /* cpufreq_khz of CPU 0, then 1 */
  gp__pb_uint(&t->w, 11, 2000);
  gp__pb_begin(&t->w, 12); /* buddy_info */
  gp__pb_string(&t->w, 1, "Node 0");
  gp__pb_string(&t->w, 2, "Normal");
  gp__pb_uint(&t->w, 3, 11);
  gp__pb_uint(&t->w, 3, 22);
  gp__pb_end(&t->w);
  disk(t, 100, 10);
  kv(t, 14, 1, 55);        /* psi cpu.some */
  gp__pb_begin(&t->w, 15); /* thermal_zone */
  gp__pb_string(&t->w, 1, "tz0");
  gp__pb_uint(&t->w, 2, 42);
  gp__pb_string(&t->w, 3, "cpu-thermal");
  gp__pb_end(&t->w);
  gp__pb_begin(&t->w, 16); /* cpuidle_state of CPU 1 */
  gp__pb_uint(&t->w, 1, 1);
  gp__pb_begin(&t->w, 2);
  gp__pb_string(&t->w, 1, "C1");
  gp__pb_uint(&t->w, 2, 1234);
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  gp__pb_uint(&t->w, 17, 585); /* gpufreq_mhz */
  gp__pb_begin(&t->w, 18);     /* slab_info */
  gp__pb_string(&t->w, 1, "kmalloc-64");
  gp__pb_uint(&t->w, 2, 2);
  gp__pb_uint(&t->w, 3, 5);
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  tg_end(t);

  /* a second disk sample: the first amounts and throughputs */
  tg_packet(t, 3000, 2, 0);
  gp__pb_begin(&t->w, PKT_SYS_STATS);
  disk(t, 4196, 30);
  gp__pb_end(&t->w);
  tg_end(t);
}

TEST(tp_import_raw_and_sys_stats) {
  tg t;
  tg_init(&t);
  build(&t);
  const char *out = getenv("GPUPERF_RAW_OUT");
  if (out)
    tg_write(&t, out);
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  tp_expect(tp,
            "select id, ts, name, cpu, common_flags, ucpu, (select tid from "
            "thread where utid = f.utid) as tid from ftrace_event f order by "
            "id",
            "\"id\",\"ts\",\"name\",\"cpu\",\"common_flags\",\"ucpu\",\"tid\"\n"
            "0,900,\"workqueue_queue_work\",1,0,1,10\n"
            "1,950,\"workqueue_queue_work\",1,0,1,10\n"
            "2,1000,\"cpu_frequency\",1,0,1,10\n"
            "3,1100,\"cpu_idle\",1,0,1,10\n"
            "4,1200,\"sched_wakeup\",1,0,1,11\n"
            "5,1300,\"my_event\",1,0,1,11\n"
            "6,1600,\"cpu_idle\",1,0,1,11\n"
            "7,1600,\"[NULL]\",1,0,1,11\n");
  tp_expect(
      tp,
      "select f.id, a.flat_key, a.key, a.value_type, a.display_value "
      "from ftrace_event f join args a using (arg_set_id) order by f.id, "
      "a.id",
      "\"id\",\"flat_key\",\"key\",\"value_type\",\"display_value\"\n"
      "0,\"work\",\"work\",\"uint\",\"7\"\n"
      "0,\"function\",\"function\",\"string\",\"my_work_fn\"\n"
      "1,\"work\",\"work\",\"uint\",\"8\"\n"
      "1,\"function\",\"function\",\"uint\",\"2\"\n"
      "2,\"state\",\"state\",\"uint\",\"1800000\"\n"
      "2,\"cpu_id\",\"cpu_id\",\"uint\",\"3\"\n"
      "3,\"state\",\"state\",\"uint\",\"4294967295\"\n"
      "3,\"cpu_id\",\"cpu_id\",\"uint\",\"0\"\n"
      "4,\"comm\",\"comm\",\"string\",\"wakee\"\n"
      "4,\"pid\",\"pid\",\"int\",\"13\"\n"
      "4,\"prio\",\"prio\",\"int\",\"120\"\n"
      "4,\"target_cpu\",\"target_cpu\",\"int\",\"-1\"\n"
      "5,\"a\",\"a\",\"int\",\"-5\"\n"
      "5,\"b\",\"b\",\"int\",\"7\"\n"
      "5,\"c\",\"c\",\"string\",\"x\"\n"
      "6,\"state\",\"state\",\"uint\",\"1\"\n"
      "6,\"cpu_id\",\"cpu_id\",\"uint\",\"1\"\n"
      "7,\"arm_cpu_implementer\",\"arm_cpu_implementer\",\"uint\",\"65\"\n"
      "7,\"arm_cpu_architecture\",\"arm_cpu_architecture\",\"uint\",\"8\"\n"
      "7,\"arm_cpu_variant\",\"arm_cpu_variant\",\"uint\",\"0\"\n"
      "7,\"arm_cpu_part\",\"arm_cpu_part\",\"uint\",\"3333\"\n"
      "7,\"arm_cpu_revision\",\"arm_cpu_revision\",\"uint\",\"0\"\n"
      "7,\"cpu_features.mte\",\"cpu_features.mte\",\"bool\",\"true\"\n"
      "7,\"cpu_features.mte3\",\"cpu_features.mte3\",\"bool\",\"true\"\n"
      "7,\"cpu_features.raw_bitmap\",\"cpu_features.raw_bitmap\",\"uint\","
      "\"3\"\n");
  tp_expect(tp,
            "select c.id, a.key, a.value_type, a.display_value from counter c "
            "join args a using (arg_set_id) order by c.id, a.key",
            "\"id\",\"key\",\"value_type\",\"display_value\"\n"
            "27,\"num_slabs\",\"uint\",\"5\"\n"
            "27,\"pages_per_slab\",\"uint\",\"2\"\n");
  tp_expect(
      tp,
      "select t.id, t.name, t.type, t.unit, c.ts, c.value from counter c "
      "join counter_track t on c.track_id = t.id order by c.id",
      "\"id\",\"name\",\"type\",\"unit\",\"ts\",\"value\"\n"
      "0,\"cpufreq\",\"cpu_frequency\",\"[NULL]\",1000,1800000.000000\n"
      "1,\"cpuidle\",\"cpu_idle\",\"[NULL]\",1100,4294967295.000000\n"
      "2,\"cpuidle\",\"cpu_idle\",\"[NULL]\",1600,1.000000\n"
      "3,\"MemTotal\",\"meminfo\",\"bytes\",2000,102400.000000\n"
      "4,\"gpufreq Frequency\",\"clock_frequency\",\"[NULL]\",2000,500.000000\n"
      "5,\"cpufreq\",\"cpu_frequency\",\"[NULL]\",2000,1000.000000\n"
      "6,\"cpufreq\",\"cpu_frequency\",\"[NULL]\",2000,2000.000000\n"
      "7,\"nr_free_pages\",\"vmstat\",\"[NULL]\",2000,3.000000\n"
      "8,\"cpu.times.user_ns\",\"cpustat\",\"[NULL]\",2000,50.000000\n"
      "9,\"cpu.times.user_nice_ns\",\"cpustat\",\"[NULL]\",2000,0.000000\n"
      "10,\"cpu.times.system_mode_ns\",\"cpustat\",\"[NULL]\",2000,0.000000\n"
      "11,\"cpu.times.idle_ns\",\"cpustat\",\"[NULL]\",2000,70.000000\n"
      "12,\"cpu.times.io_wait_ns\",\"cpustat\",\"[NULL]\",2000,0.000000\n"
      "13,\"cpu.times.irq_ns\",\"cpustat\",\"[NULL]\",2000,0.000000\n"
      "14,\"cpu.times.softirq_ns\",\"cpustat\",\"[NULL]\",2000,0.000000\n"
      "15,\"cpu.times.steal_ns\",\"cpustat\",\"[NULL]\",2000,0.000000\n"
      "16,\"num_irq (id: 3)\",\"num_irq\",\"[NULL]\",2000,4.000000\n"
      "17,\"num_softirq (id: 1)\",\"num_softirq\",\"[NULL]\",2000,2.000000\n"
      "18,\"num_forks\",\"num_forks\",\"[NULL]\",2000,9.000000\n"
      "19,\"num_irq_total\",\"num_irq_total\",\"[NULL]\",2000,100.000000\n"
      "20,\"num_softirq_total\",\"num_softirq_total\",\"[NULL]\",2000,6."
      "000000\n"
      "21,\"mem.buddyinfo[Node 0][Normal][16 "
      "kB]\",\"buddyinfo\",\"[NULL]\",2000,11.000000\n"
      "22,\"mem.buddyinfo[Node 0][Normal][32 "
      "kB]\",\"buddyinfo\",\"[NULL]\",2000,22.000000\n"
      "23,\"psi.cpu.some\",\"psi\",\"[NULL]\",2000,55.000000\n"
      "24,\"cpu-thermal\",\"thermal_temperature_sys\",\"C\",2000,42.000000\n"
      "25,\"cpuidle1.C1\",\"cpu_idle_state\",\"us\",2000,1234.000000\n"
      "26,\"gpufreq\",\"gpu_frequency\",\"kHz\",2000,585.000000\n"
      "27,\"mem.slab.kmalloc-64\",\"slabinfo\",\"bytes\",2000,163840.000000\n"
      "28,\"diskstat.[sda].read_amount\",\"diskstat\",\"MB\",3000,2.000000\n"
      "29,\"diskstat.[sda].read_throughput\",\"diskstat\",\"MB/"
      "s\",3000,100.000000\n"
      "30,\"diskstat.[sda].write_amount\",\"diskstat\",\"MB\",3000,0.000000\n"
      "31,\"diskstat.[sda].write_throughput\",\"diskstat\",\"MB/"
      "s\",3000,0.000000\n"
      "32,\"diskstat.[sda].discard_amount\",\"diskstat\",\"MB\",3000,0.000000\n"
      "33,\"diskstat.[sda].discard_throughput\",\"diskstat\",\"MB/"
      "s\",3000,0.000000\n"
      "34,\"diskstat.[sda].flush_amount\",\"diskstat\",\"count\",3000,0."
      "000000\n"
      "35,\"diskstat.[sda].flush_time\",\"diskstat\",\"ms\",3000,0.000000\n");
  tp_expect(tp,
            "select t.id, a.key, a.value_type, a.display_value from "
            "counter_track t join args a on a.arg_set_id = "
            "t.dimension_arg_set_id order by t.id, a.id",
            "\"id\",\"key\",\"value_type\",\"display_value\"\n"
            "0,\"cpu\",\"int\",\"3\"\n"
            "1,\"cpu\",\"int\",\"0\"\n"
            "2,\"cpu\",\"int\",\"1\"\n"
            "3,\"meminfo_key\",\"string\",\"MemTotal\"\n"
            "4,\"linux_device\",\"string\",\"gpufreq\"\n"
            "5,\"cpu\",\"int\",\"0\"\n"
            "6,\"cpu\",\"int\",\"1\"\n"
            "7,\"vmstat_key\",\"string\",\"nr_free_pages\"\n"
            "8,\"cpu\",\"int\",\"1\"\n"
            "8,\"cpustat_key\",\"string\",\"user_ns\"\n"
            "9,\"cpu\",\"int\",\"1\"\n"
            "9,\"cpustat_key\",\"string\",\"user_nice_ns\"\n"
            "10,\"cpu\",\"int\",\"1\"\n"
            "10,\"cpustat_key\",\"string\",\"system_mode_ns\"\n"
            "11,\"cpu\",\"int\",\"1\"\n"
            "11,\"cpustat_key\",\"string\",\"idle_ns\"\n"
            "12,\"cpu\",\"int\",\"1\"\n"
            "12,\"cpustat_key\",\"string\",\"io_wait_ns\"\n"
            "13,\"cpu\",\"int\",\"1\"\n"
            "13,\"cpustat_key\",\"string\",\"irq_ns\"\n"
            "14,\"cpu\",\"int\",\"1\"\n"
            "14,\"cpustat_key\",\"string\",\"softirq_ns\"\n"
            "15,\"cpu\",\"int\",\"1\"\n"
            "15,\"cpustat_key\",\"string\",\"steal_ns\"\n"
            "16,\"irq\",\"int\",\"3\"\n"
            "17,\"irq\",\"int\",\"1\"\n"
            "21,\"buddyinfo_node\",\"string\",\"Node 0\"\n"
            "21,\"buddyinfo_zone\",\"string\",\"Normal\"\n"
            "21,\"buddyinfo_chunk_size_kb\",\"int\",\"16\"\n"
            "22,\"buddyinfo_node\",\"string\",\"Node 0\"\n"
            "22,\"buddyinfo_zone\",\"string\",\"Normal\"\n"
            "22,\"buddyinfo_chunk_size_kb\",\"int\",\"32\"\n"
            "23,\"psi_resource\",\"string\",\"cpu.some\"\n"
            "24,\"thermal_zone\",\"string\",\"cpu-thermal\"\n"
            "25,\"cpu\",\"int\",\"1\"\n"
            "25,\"state\",\"string\",\"C1\"\n"
            "26,\"ugpu\",\"int\",\"0\"\n"
            "26,\"gpu\",\"int\",\"0\"\n"
            "27,\"slab_name\",\"string\",\"kmalloc-64\"\n"
            "28,\"device_name\",\"string\",\"sda\"\n"
            "28,\"counter_name\",\"string\",\"read_amount\"\n"
            "29,\"device_name\",\"string\",\"sda\"\n"
            "29,\"counter_name\",\"string\",\"read_throughput\"\n"
            "30,\"device_name\",\"string\",\"sda\"\n"
            "30,\"counter_name\",\"string\",\"write_amount\"\n"
            "31,\"device_name\",\"string\",\"sda\"\n"
            "31,\"counter_name\",\"string\",\"write_throughput\"\n"
            "32,\"device_name\",\"string\",\"sda\"\n"
            "32,\"counter_name\",\"string\",\"discard_amount\"\n"
            "33,\"device_name\",\"string\",\"sda\"\n"
            "33,\"counter_name\",\"string\",\"discard_throughput\"\n"
            "34,\"device_name\",\"string\",\"sda\"\n"
            "34,\"counter_name\",\"string\",\"flush_amount\"\n"
            "35,\"device_name\",\"string\",\"sda\"\n"
            "35,\"counter_name\",\"string\",\"flush_time\"\n");
  tp_expect(tp, "select id, name, type, cpu from cpu_counter_track order by id",
            "\"id\",\"name\",\"type\",\"cpu\"\n"
            "0,\"cpufreq\",\"cpu_frequency\",3\n"
            "1,\"cpuidle\",\"cpu_idle\",0\n"
            "2,\"cpuidle\",\"cpu_idle\",1\n"
            "5,\"cpufreq\",\"cpu_frequency\",0\n"
            "6,\"cpufreq\",\"cpu_frequency\",1\n"
            "8,\"cpu.times.user_ns\",\"cpustat\",1\n"
            "9,\"cpu.times.user_nice_ns\",\"cpustat\",1\n"
            "10,\"cpu.times.system_mode_ns\",\"cpustat\",1\n"
            "11,\"cpu.times.idle_ns\",\"cpustat\",1\n"
            "12,\"cpu.times.io_wait_ns\",\"cpustat\",1\n"
            "13,\"cpu.times.irq_ns\",\"cpustat\",1\n"
            "14,\"cpu.times.softirq_ns\",\"cpustat\",1\n"
            "15,\"cpu.times.steal_ns\",\"cpustat\",1\n"
            "25,\"cpuidle1.C1\",\"cpu_idle_state\",1\n");
  tp_expect(tp, "select start_ts, end_ts from trace_bounds",
            "\"start_ts\",\"end_ts\"\n"
            "900,3000\n");
  tp_expect(tp, "select id, ucpu, cpu, machine_id from cpu order by id",
            "\"id\",\"ucpu\",\"cpu\",\"machine_id\"\n"
            "0,0,0,0\n"
            "1,1,1,0\n"
            "2,2,2,0\n"
            "3,3,3,0\n");
  tp_expect(tp,
            "select id, cpu, cluster_id, processor, capacity, machine_id from "
            "cpu order by id",
            "\"id\",\"cpu\",\"cluster_id\",\"processor\",\"capacity\","
            "\"machine_id\"\n"
            "0,0,0,\"little\",512,0\n"
            "1,1,1,\"big\",1024,0\n"
            "2,2,0,\"little\",512,0\n"
            "3,3,0,\"[NULL]\",\"[NULL]\",0\n");
  tp_expect(tp, "select * from cpu_available_frequencies order by id",
            "\"id\",\"cpu\",\"freq\",\"ucpu\"\n"
            "0,0,300000,0\n"
            "1,0,1800000,0\n"
            "2,2,300000,2\n"
            "3,2,1800000,2\n"
            "4,1,300000,1\n"
            "5,1,2400000,1\n");
  tp_expect(tp,
            "select c.id, a.key, a.value_type, a.display_value from cpu c join "
            "args a using (arg_set_id) order by c.id, a.key",
            "\"id\",\"key\",\"value_type\",\"display_value\"\n"
            "0,\"arm_cpu_architecture\",\"uint\",\"8\"\n"
            "0,\"arm_cpu_implementer\",\"uint\",\"65\"\n"
            "0,\"arm_cpu_part\",\"uint\",\"3333\"\n"
            "0,\"arm_cpu_revision\",\"uint\",\"0\"\n"
            "0,\"arm_cpu_variant\",\"uint\",\"0\"\n"
            "0,\"cpu_features.mte\",\"bool\",\"true\"\n"
            "0,\"cpu_features.mte3\",\"bool\",\"true\"\n"
            "0,\"cpu_features.raw_bitmap\",\"uint\",\"3\"\n"
            "1,\"cpu_features.raw_bitmap\",\"uint\",\"128\"\n"
            "2,\"arm_cpu_architecture\",\"uint\",\"8\"\n"
            "2,\"arm_cpu_implementer\",\"uint\",\"65\"\n"
            "2,\"arm_cpu_part\",\"uint\",\"3333\"\n"
            "2,\"arm_cpu_revision\",\"uint\",\"0\"\n"
            "2,\"arm_cpu_variant\",\"uint\",\"0\"\n");
  tp_expect(tp,
            "select name, idx, value from stats where value != 0 and name in "
            "('meminfo_unknown_keys', 'vmstat_unknown_keys', "
            "'invalid_cpu_times', 'psi_unknown_resource', "
            "'ftrace_missing_event_id', 'ftrace_bundle_tokenizer_errors', "
            "'cpu_info_empty', 'cpu_info_unknown_cpu_features', "
            "'interned_data_tokenizer_errors') "
            "order by name",
            "\"name\",\"idx\",\"value\"\n"
            "\"cpu_info_empty\",\"[NULL]\",1\n"
            "\"cpu_info_unknown_cpu_features\",\"[NULL]\",1\n"
            "\"ftrace_bundle_tokenizer_errors\",\"[NULL]\",1\n"
            "\"ftrace_missing_event_id\",\"[NULL]\",1\n"
            "\"interned_data_tokenizer_errors\",\"[NULL]\",1\n"
            "\"invalid_cpu_times\",\"[NULL]\",1\n"
            "\"meminfo_unknown_keys\",\"[NULL]\",1\n"
            "\"vmstat_unknown_keys\",\"[NULL]\",1\n");
  gp_tp_close(tp);
}
