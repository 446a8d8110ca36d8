#!lua flags=allow-key-locking
--[[ publish-rate: spends a publish token's jobs from its client's and its token's windows at a
partitioned queue's root, before the enqueue that writes them runs on the partitions. One
place per queue, whatever the number of partitions and databases: a client gets publishRateLimit
.max per window on the queue, not per partition (publish-rate.lua in includes has the windows).
An unpartitioned queue's enqueue checks the same keys itself (enqueue.lua): no call of this.
Reads no config: the limits come from the config the caller read.

KEYS[1]  rate        string  the client's count in its publishRateLimit window
KEYS[2]  token-rate  string  the token's count in its publishTokenRateLimit window

ARGV[1]  n, the jobs of the call
ARGV[2]  the limits, JSON {publishRateLimit, publishTokenRateLimit}: each {max, periodMs}, null
         for none

Returns {1}
Errors  {-13, ms left, max, periodMs, limit} RATE_LIMITED (the limit's name); nothing written
Costs   an MGET, then a SET or INCRBY per window (a PTTL instead when refused)
]]
-- @include errors
-- @include publish-rate

local refused, rate = checkRates(publishWindows(cjson.decode(ARGV[2]), KEYS[1], KEYS[2]), tonumber(ARGV[1]))
if refused then return refused end
takeRates(rate)
return { 1 }
