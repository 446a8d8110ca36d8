-- Ordered batches (docs/batches.md): on a queue whose config has `batch` (maxSize > 1), one
-- delivery carries a group's head and up to maxSize - 1 jobs right behind it, all leased by the
-- same reservation with one deadline. Only groups that run one job at a time batch (a flow
-- group's jobs go one per delivery, flow.lua). A batch is its jobs' own leases, so complete,
-- fail, heartbeat and cancel stay per job; what the batch adds lives in meta 'b:<group>', a group
-- field like g:/l:/f: (meta.lua):
--   '["<id>",...]' while the group's head is idle: the ids behind it in its zset. Reserve leases
--       them with the head without reading the group's zset (it declares no group key); every
--       script that changes such a group's zset writes the list anew (refresh below).
--   '<n>' or '<n>h' while a batch is out: n of its jobs are still leased. The group offers
--       nothing until the last of them ends; 'h': one of them holds the group (its retry
--       waits), so that last end offers nothing either and the hold's end does.
-- The members of jobs that end while more of their batch is out leave the group zset in one
-- ZREM, when the batch's last lease ends (unlink); an enqueue's new members join theirs in one
-- ZADD per group and call (link): flushGroups writes both, before anything reads the zset.
-- Everything is in one table: enqueue.lua and tick.lua are near Lua's 200 locals.

-- @include job
-- @include meta

local Batch = {}

-- The queue's batch config when its deliveries may carry more than one job, else nil.
function Batch.config(M)
  local b = M.cfg.batch
  if type(b) == 'table' and (b.maxSize or 1) > 1 then return b end
  return nil
end

function Batch.field(group)
  return 'b:' .. group
end

-- How many of the group's batch are still leased (0: none is out), and whether one holds it.
function Batch.out(M, group)
  local v = metaGet(M, Batch.field(group))
  if not v or string.sub(v, 1, 1) == '[' then return 0, false end
  local held = string.sub(v, -1) == 'h'
  return tonumber(held and string.sub(v, 1, -2) or v) or 0, held
end

-- The ids right behind the group's idle head, as last written.
function Batch.followers(M, group)
  local v = metaGet(M, Batch.field(group))
  if v and string.sub(v, 1, 1) == '[' then return cjson.decode(v) end
  return {}
end

-- A batch of n jobs of the group went out (n = 1: a lone job, nothing to remember).
function Batch.sent(M, group, n)
  metaSet(M, Batch.field(group), n > 1 and int(n) or false)
end

-- A lease of the group ended. Returns whether the group may offer its next job now: no batch
-- is out, or this was its last lease and none of them holds the group.
function Batch.leaseEnded(M, group)
  local n, held = Batch.out(M, group)
  if n == 0 then return true end
  if n <= 1 then
    metaSet(M, Batch.field(group), false)
    return not held
  end
  metaSet(M, Batch.field(group), int(n - 1) .. (held and 'h' or ''))
  return false
end

-- One of the batch's jobs holds the group (`hold`), or its hold ended (not `hold`): the last
-- lease of the batch to end offers nothing while it holds.
function Batch.holding(M, group, hold)
  local n = Batch.out(M, group)
  if n > 0 then metaSet(M, Batch.field(group), int(n) .. (hold and 'h' or '')) end
end

-- The list of `kind` ('linked' or 'unlinked') writes gathered for `groupKey`.
function Batch.pending(B, kind, groupKey)
  B[kind] = B[kind] or {}
  local list = B[kind][groupKey]
  if not list then
    list = {}
    B[kind][groupKey] = list
  end
  return list
end

-- Member `m` of a job that ended leaves the group zset `groupKey` with the batch's last lease:
-- one ZREM per batch, not one per job.
function Batch.unlink(B, groupKey, m)
  local list = Batch.pending(B, 'unlinked', groupKey)
  list[#list + 1] = m
end

-- Member `m` (score `orderMs`) joins the group zset `groupKey` with the call's others.
function Batch.link(B, groupKey, orderMs, m)
  local list = Batch.pending(B, 'linked', groupKey)
  list[#list + 1] = orderMs
  list[#list + 1] = m
end

-- Writes what link and unlink gathered for `groupKey` (nil: for every group).
function Batch.flushGroups(B, groupKey)
  for _, kind in ipairs({ 'linked', 'unlinked' }) do
    for key, list in pairs(B[kind] or {}) do
      if not groupKey or key == groupKey then
        redis.call(kind == 'linked' and 'ZADD' or 'ZREM', key, unpack(list))
        B[kind][key] = nil
      end
    end
  end
end

-- The score of an idle head in `ready`: its orderMs, plus maxWaitMs while its group holds fewer
-- than maxSize jobs (a head that waited that long goes with what there is; a full group goes at
-- once). The due check (orderMs + orderingWindowMs <= now) reads it unchanged.
function Batch.readyScore(M, group, orderMs)
  local b = Batch.config(M)
  if not b or (b.maxWaitMs or 0) == 0 or groupJobs(M, group) >= b.maxSize then return orderMs end
  return orderMs + b.maxWaitMs
end

-- Writes the followers of the group's head from `members` (ZRANGE ... WITHSCORES of its zset,
-- the head first).
function Batch.noteHead(M, group, members)
  local ids = {}
  for i = 3, #members, 2 do ids[#ids + 1] = idOf(members[i]) end
  metaSet(M, Batch.field(group), #ids > 0 and cjson.encode(ids) or false)
end

-- After a script changed the zsets of these groups ({groupKey = group}): their followers anew,
-- and a head offered before its group filled is due at once (a lower score: ZADD XX LT, only
-- if it is there). One ZRANGE per group, and the ZADD when it filled. Skipped while a batch is
-- out: the batch's last end offers the head and writes its followers then.
function Batch.refresh(K, B, touched)
  local b = Batch.config(B.M)
  if not b then return end
  for groupKey, group in pairs(touched) do
    if Batch.out(B.M, group) == 0 and groupJobs(B.M, group) > 0 then
      Batch.flushGroups(B, groupKey)
      local members = redis.call('ZRANGE', groupKey, 0, b.maxSize - 1, 'WITHSCORES')
      Batch.noteHead(B.M, group, members)
      local pending = B.ready[groupKey]
      if (b.maxWaitMs or 0) > 0 and #members >= 2 * b.maxSize and not pending then
        redis.call('ZADD', K.ready, 'XX', 'LT', members[2], members[1])
      end
    end
  end
end

-- Whether lease member `m` of `group` is the first of its batch still out (the job at the head
-- of its group), or of no batch at all. A lapsed batch fails its first job's attempt; the jobs
-- behind it go back untouched (tick.lua). One ZRANGE per group and call.
function Batch.isFirst(B, groupKey, group, m)
  if Batch.out(B.M, group) == 0 then return true end
  B.heads = B.heads or {}
  local head = B.heads[groupKey]
  if head == nil then
    head = redis.call('ZRANGE', groupKey, 0, 0)[1] or false
    B.heads[groupKey] = head
  end
  return head == m
end
