#!lua flags=no-writes,allow-key-locking
--[[ list-jobs: one page of a queue's jobs in one state.
Order: waiting with a group, as they will run; waiting without a group, hash order (HSCAN);
delayed by runAt; active by lease deadline; completed and failed newest first.

KEYS[1] meta       hash  config
KEYS[2] jobs       hash  id -> job record
KEYS[3] active     zset  lease members '<id> <token><group>' by deadline
KEYS[4] delayed    zset  '<id> <group>' by runAt
KEYS[5] completed  zset  kept completed ids by finishedAt
KEYS[6] failed     zset  kept failed ids by finishedAt
KEYS[7] group      zset  the group's jobs (only with a group)

ARGV[1] state: waiting | delayed | active | completed | failed
ARGV[2] limit (page size)
ARGV[3] cursor ('' = first page): an offset, or '<HSCAN cursor>:<shown>' for waiting without a group
ARGV[4] group filter for the other states ('' = all groups)

Returns {1, next cursor ('' = no more), {{id, state JSON, data, state, startedAt, expiresAt, maxAttempts}...}}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job
-- @include meta
-- @include view

local K = { jobs = KEYS[2], active = KEYS[3] }
local wanted, limit, cursor, group = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local M = openMeta(KEYS[1])
if not M.cfg then return { QUEUE_NOT_FOUND } end

local views, nextCursor = {}, ''
local function viewIf(id, raw)
  local view = jobView(K, M, id, raw)
  if view[4] == wanted and (group == '' or decodeJob(raw).g == group) then return view end
end
local function add(id)
  local raw = redis.call('HGET', K.jobs, id)
  local view = raw and viewIf(id, raw)
  if view then views[#views + 1] = view end
end

if wanted == 'waiting' and not KEYS[7] then
  -- HSCAN's COUNT is only a hint (a small hash comes back whole), so pages are cut at `limit`
  -- and the cursor '<scan cursor>:<shown>' remembers how much of a batch was already shown.
  local scan, shown = string.match(cursor, '^(%d+):(%d+)$')
  scan, shown = scan or '0', tonumber(shown) or 0
  for _ = 1, 3 do -- bounded work per page: a page may come back short, with a cursor
    local page = redis.call('HSCAN', K.jobs, scan, 'COUNT', limit)
    local matched, full = 0, false
    for i = 1, #page[2], 2 do
      local view = viewIf(page[2][i], page[2][i + 1])
      if view then
        matched = matched + 1
        if matched > shown then
          if #views == limit then full = true break end
          views[#views + 1] = view
        end
      end
    end
    if full then
      nextCursor = scan .. ':' .. (matched - 1)
      break
    end
    scan, shown = page[1], 0
    nextCursor = scan == '0' and '' or scan .. ':0'
    if scan == '0' then break end
    if #views == limit then break end
  end
else
  local offset = tonumber(cursor) or 0
  local source, reverse = ({ delayed = KEYS[4], active = KEYS[3], completed = KEYS[5],
    failed = KEYS[6], waiting = KEYS[7] })[wanted], wanted == 'completed' or wanted == 'failed'
  local members = redis.call(reverse and 'ZREVRANGE' or 'ZRANGE', source, offset, offset + limit - 1)
  for _, m in ipairs(members) do
    if wanted == 'waiting' then
      add(idOf(m))
    elseif wanted == 'delayed' then
      add((splitMember(m)))
    elseif wanted == 'active' then
      add((splitLease(m)))
    else
      add(m)
    end
  end
  if #members == limit then nextCursor = tostring(offset + limit) end
end
return { 1, nextCursor, views }
