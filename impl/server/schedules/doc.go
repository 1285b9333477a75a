// Package schedules starts runs on a cron cadence in a time zone, exactly once per scheduled time
// across any number of sdods processes.
//
// A firing is identified by (schedule id, scheduled time); that pair is unique in the database and
// its row is inserted in the transaction that creates the run it starts, so a scheduled time is
// fired at most once, and a process dying mid-firing leaves neither row nor run. The scheduler's
// tick (FireDue) takes each due schedule with FOR UPDATE SKIP LOCKED, so processes share the work
// instead of waiting on each other. The rules (DST, overlap, catch-up, jitter, pause after failures)
// are written down in docs/schedules.md.
package schedules

// Every process must know every IANA zone, also on a machine without a zoneinfo database.
import _ "time/tzdata"
