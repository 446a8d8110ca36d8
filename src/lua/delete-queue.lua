#!lua flags=allow-key-locking
--[[ delete-queue: removes every key of a queue, one bounded step per call; the caller repeats
until it reports done. The first step hides the queue (its config goes), so nothing new is
enqueued or reserved while the rest is removed. Group zsets exist only for groups with a
'g:<group>' counter in meta: each step removes the groups the previous step named (their keys
declared by the caller) and names the next ones; meta goes last.

KEYS[1]     meta           hash    config and counters (meta.lua)
KEYS[2]     jobs           hash    id -> job record
KEYS[3]     ready          zset    idle group heads
KEYS[4]     active         zset    lease members
KEYS[5]     held           zset    held or parked groups
KEYS[6]     delayed        zset    delayed jobs
KEYS[7]     completed      zset    kept completed ids
KEYS[8]     failed         zset    kept failed ids
KEYS[9]     paused-groups  set     paused group names
KEYS[10]    repeats        hash    repeat specs
KEYS[11]    repeat-due     zset    repeats by next run
KEYS[12]    tick-lock      string  an opportunistic tick's lock
KEYS[13]    cancelled      zset    kept cancelled ids
KEYS[14]    revoked        zset    leases a cancel ended
KEYS[15]    outcomes       zset    pending outcome callbacks
KEYS[16]    outcome-records hash   outcome records
KEYS[17]    prioritized    zset    idle group heads with a priority
KEYS[18]    starts         zset    recent starts (queue rate limit)
KEYS[19]    dedup          zset    remembered ended job ids
KEYS[20]    debounce       hash    debounce keys
KEYS[21]    results        zset    completed jobs kept for a waiter
KEYS[22]    expired        zset    kept expired ids
KEYS[23]    expiring       zset    TTL jobs not started
KEYS[23+i]  group          zset    the i-th group named in ARGV

ARGV[1] step: at most this many counters to look at for the next call
ARGV[2] HSCAN cursor of meta ('0' at first)
ARGV[3...] group names, one per declared group key (named by the previous step)

Returns {1, done 0|1, next HSCAN cursor, {group...}}: the groups to declare in the next call
Errors  {-1} QUEUE_NOT_FOUND (no such queue, and no deletion under way)
]]
-- @include errors

local metaKey, step = KEYS[1], tonumber(ARGV[1])
if redis.call('HEXISTS', metaKey, 'deleting') == 0 then
  if redis.call('HDEL', metaKey, 'config') == 0 then return { QUEUE_NOT_FOUND } end
  redis.call('HSET', metaKey, 'deleting', '1')
end

if #ARGV > 2 then
  local groupKeys, fields = {}, {}
  for i = 3, #ARGV do
    groupKeys[#groupKeys + 1] = KEYS[21 + i] -- ARGV[2 + j] names KEYS[23 + j]
    fields[#fields + 1] = 'g:' .. ARGV[i]
  end
  redis.call('UNLINK', unpack(groupKeys))
  redis.call('HDEL', metaKey, unpack(fields))
end
-- Deleting fields behind an HSCAN cursor is safe: it still reaches every field left.
local page = redis.call('HSCAN', metaKey, ARGV[2], 'MATCH', 'g:*', 'COUNT', step)
local names = {}
for i = 1, #page[2], 2 do names[#names + 1] = string.sub(page[2][i], 3) end
if #names > 0 or page[1] ~= '0' then return { 1, 0, page[1], names } end
-- UNLINK frees big values off the main thread, so this stays cheap however many jobs remain.
redis.call('UNLINK', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12],
  KEYS[13], KEYS[14], KEYS[15], KEYS[16], KEYS[17], KEYS[18], KEYS[19], KEYS[20], KEYS[21],
  KEYS[22], KEYS[23], metaKey)
return { 1, 1, '0', {} }
