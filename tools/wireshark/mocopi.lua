-- Sony mocopi (Sony Motion Format, UDP 12351) for Wireshark and tshark.
--
-- Every datagram is a tree of chunks: u32 LE payload length, 4-letter tag,
-- payload (children for container tags, a value otherwise). This dissector
-- walks it by tag (never by offset or datagram size), shows every chunk with
-- its offset and length, types every value, names the 27 bones, and flags
-- what cannot be decoded with the same reasons mocap-tools' decoder gives.
-- It never raises a Lua error: every read is checked against the buffer.
--
-- Install: copy into ~/.local/lib/wireshark/plugins/ (see README.md here).

local mocopi = Proto("mocopi", "Sony mocopi (Sony Motion Format)")

local BONES = {
  [0] = "root", "torso_1", "torso_2", "torso_3", "torso_4", "torso_5", "torso_6",
  "torso_7", "neck_1", "neck_2", "head", "l_shoulder", "l_up_arm", "l_low_arm",
  "l_hand", "r_shoulder", "r_up_arm", "r_low_arm", "r_hand", "l_up_leg",
  "l_low_leg", "l_foot", "l_toes", "r_up_leg", "r_low_leg", "r_foot", "r_toes",
}

local CONTAINERS = {
  head = true, sndf = true, skdf = true, bons = true, bndt = true,
  fram = true, btrs = true, btdt = true, sndt = true,
}
-- Which tags each parent knows (anything else is an unknown chunk).
local KNOWN = {
  [""] = { head = true, sndf = true, fram = true, skdf = true, sndt = true },
  head = { ftyp = true, vrsn = true },
  sndf = { ipad = true, rcvp = true },
  fram = { fnum = true, time = true, uttm = true, tmcd = true, btrs = true },
  btrs = { btdt = true },
  btdt = { bnid = true, tran = true },
  skdf = { bons = true },
  bons = { bndt = true },
  bndt = { bnid = true, pbid = true, tran = true },
}
local WIDTH = { vrsn = 1, ipad = 8, rcvp = 2, fnum = 4, time = 4, uttm = 8,
                tmcd = 6, bnid = 2, pbid = 2, tran = 28 }

local f = {
  chunk = ProtoField.string("mocopi.chunk", "Chunk"),
  chunk_tag = ProtoField.string("mocopi.chunk.tag", "Tag"),
  chunk_len = ProtoField.uint32("mocopi.chunk.len", "Length"),
  ftyp = ProtoField.string("mocopi.ftyp", "Format type"),
  vrsn = ProtoField.uint8("mocopi.vrsn", "Version"),
  ipad = ProtoField.ipv4("mocopi.ipad", "Sender address"),
  ipad_raw = ProtoField.uint64("mocopi.ipad.raw", "Sender address (packed)"),
  rcvp = ProtoField.uint16("mocopi.rcvp", "Receiver port"),
  fnum = ProtoField.uint32("mocopi.fnum", "Frame number"),
  time = ProtoField.double("mocopi.time", "Sender clock (s)"),
  uttm = ProtoField.double("mocopi.uttm", "Sender Unix time (s)"),
  tmcd_h = ProtoField.uint8("mocopi.tmcd.h", "Timecode hours"),
  tmcd_m = ProtoField.uint8("mocopi.tmcd.m", "Timecode minutes"),
  tmcd_s = ProtoField.uint8("mocopi.tmcd.s", "Timecode seconds"),
  tmcd_frame = ProtoField.uint8("mocopi.tmcd.frame", "Timecode frame"),
  tmcd_rate = ProtoField.uint8("mocopi.tmcd.rate", "Timecode rate"),
  tmcd_drop = ProtoField.uint8("mocopi.tmcd.drop", "Timecode drop frame"),
  bone_id = ProtoField.uint16("mocopi.bone.id", "Bone id"),
  bone_name = ProtoField.string("mocopi.bone.name", "Bone name"),
  bone_parent = ProtoField.int16("mocopi.bone.parent", "Parent bone id"),
  -- float32 on the wire, shown as doubles so tshark prints all its digits.
  qx = ProtoField.double("mocopi.bone.qx", "Rotation x"),
  qy = ProtoField.double("mocopi.bone.qy", "Rotation y"),
  qz = ProtoField.double("mocopi.bone.qz", "Rotation z"),
  qw = ProtoField.double("mocopi.bone.qw", "Rotation w"),
  px = ProtoField.double("mocopi.bone.px", "Position x (m)"),
  py = ProtoField.double("mocopi.bone.py", "Position y (m)"),
  pz = ProtoField.double("mocopi.bone.pz", "Position z (m)"),
  bones = ProtoField.uint32("mocopi.bones", "Bones"),
  kind = ProtoField.string("mocopi.kind", "Packet kind"),
  value = ProtoField.bytes("mocopi.value", "Value"),
}
mocopi.fields = {}
for _, v in pairs(f) do table.insert(mocopi.fields, v) end

local e_malformed = ProtoExpert.new("mocopi.malformed", "Malformed mocopi datagram",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_unknown = ProtoExpert.new("mocopi.unknown", "Unknown chunk",
  expert.group.UNDECODED, expert.severity.NOTE)
local e_odd = ProtoExpert.new("mocopi.odd", "Odd value (decoded all the same)",
  expert.group.PROTOCOL, expert.severity.WARN)
mocopi.experts = { e_malformed, e_unknown, e_odd }

local prefs = mocopi.prefs
prefs.port = Pref.uint("UDP port", 12351, "UDP port of the mocopi stream")

-- A walk fails with {offset, tag, reason}; the text matches our decoder's.
local Fail = {}
local function fail(offset, tag, reason)
  error(setmetatable({ offset = offset, tag = tag, reason = reason }, Fail), 0)
end

-- Calls each(chunk) for the chunks in buf[from, to) as they are read
-- ({off, len, tag, voff}), failing at the first that does not fit: the same
-- order of checks as our decoder, so the first fault found is the same.
local function walk(buf, from, to, each)
  local at = from
  while at < to do
    local left = to - at
    if left < 8 then
      fail(at, nil, string.format("truncated chunk header: need 8 bytes, have %d", left))
    end
    local len = buf(at, 4):le_uint()
    local tag = buf(at + 4, 4):raw()
    if len > left - 8 then
      fail(at, tag, string.format("chunk length %d overruns its parent: %d bytes left", len, left - 8))
    end
    each({ off = at, len = len, tag = tag, voff = at + 8 })
    at = at + 8 + len
  end
end

local function chunks(buf, from, to)
  local out = {}
  walk(buf, from, to, function(c) table.insert(out, c) end)
  return out
end

local function fixed(c, width)
  if c.len ~= width then
    fail(c.off, c.tag, string.format("bad value width: expected %d bytes, got %d", width, c.len))
  end
end

-- Children of `c` sorted into slots by tag (each at most once).
local function slots(buf, c, parent_tag)
  local known = KNOWN[parent_tag] or {}
  local got = {}
  walk(buf, c.voff, c.voff + c.len, function(ch)
    if known[ch.tag] then
      if got[ch.tag] then fail(ch.off, ch.tag, "duplicate chunk") end
      got[ch.tag] = ch
    end
  end)
  return got
end

local function need(got, tag, parent)
  local c = got[tag]
  if not c then fail(parent.off, parent.tag, "missing `" .. tag .. "` chunk") end
  return c
end

-- Validates the whole datagram first (so the tree never shows half a
-- packet as good); returns the packet kind or raises a Fail.
local function validate(buf)
  local total = buf:len()
  if total == 0 then fail(0, nil, "empty datagram") end
  local head, sndf, payload
  walk(buf, 0, total, function(c)
    if c.tag == "head" then
      if head then fail(c.off, c.tag, "duplicate chunk") end
      head = c
    elseif c.tag == "sndf" then
      if sndf then fail(c.off, c.tag, "duplicate chunk") end
      sndf = c
    elseif c.tag == "fram" or c.tag == "skdf" or c.tag == "sndt" then
      if payload then
        fail(c.off, c.tag, payload.tag == c.tag and "duplicate chunk"
          or "more than one payload chunk (fram, skdf, sndt)")
      end
      payload = c
    end
  end)
  if not head then fail(0, nil, "missing `head` chunk") end
  local h = slots(buf, head, "head")
  local ftyp = need(h, "ftyp", head)
  if buf(ftyp.voff, ftyp.len):raw() ~= "sony motion format" then
    fail(ftyp.off, "ftyp", "format type is not \"sony motion format\"")
  end
  local vrsn = need(h, "vrsn", head)
  fixed(vrsn, 1)
  local v = buf(vrsn.voff, 1):uint()
  if v ~= 1 then fail(vrsn.off, "vrsn", string.format("unsupported format version %d (known: 1)", v)) end
  if sndf then
    local s = slots(buf, sndf, "sndf")
    fixed(need(s, "ipad", sndf), 8)
    fixed(need(s, "rcvp", sndf), 2)
  end
  if not payload then fail(0, nil, "no payload chunk (fram, skdf or sndt)") end
  if payload.tag == "fram" then
    local fr = slots(buf, payload, "fram")
    fixed(need(fr, "fnum", payload), 4)
    fixed(need(fr, "time", payload), 4)
    if fr.uttm then fixed(fr.uttm, 8) end
    if fr.tmcd then fixed(fr.tmcd, 6) end
    local btrs = need(fr, "btrs", payload)
    walk(buf, btrs.voff, btrs.voff + btrs.len, function(b)
      if b.tag == "btdt" then
        local s = slots(buf, b, "btdt")
        fixed(need(s, "bnid", b), 2)
        fixed(need(s, "tran", b), 28)
      end
    end)
  elseif payload.tag == "skdf" then
    local sk = slots(buf, payload, "skdf")
    local bons = need(sk, "bons", payload)
    walk(buf, bons.voff, bons.voff + bons.len, function(b)
      if b.tag == "bndt" then
        local s = slots(buf, b, "bndt")
        fixed(need(s, "bnid", b), 2)
        fixed(need(s, "pbid", b), 2)
        fixed(need(s, "tran", b), 28)
      end
    end)
  else
    walk(buf, payload.voff, payload.voff + payload.len, function() end)
  end
  return payload.tag
end

local function finite(x) return x == x and x ~= math.huge and x ~= -math.huge end

-- Adds the tree of a validated datagram; returns the bone count.
local function show(buf, pinfo, tree, from, to, parent_tag, ctx)
  local known = KNOWN[parent_tag] or {}
  for _, c in ipairs(chunks(buf, from, to)) do
    local range = buf(c.off, 8 + c.len)
    local node = tree:add(f.chunk, range, c.tag,
      string.format("%s (offset %d, length %d)", c.tag, c.off, c.len))
    node:add_le(f.chunk_len, buf(c.off, 4))
    node:add(f.chunk_tag, buf(c.off + 4, 4))
    local v = c.len > 0 and buf(c.voff, c.len) or nil
    if not known[c.tag] then
      node:add_proto_expert_info(e_unknown, "unknown chunk `" .. c.tag .. "` in `" .. parent_tag .. "`")
      if v then node:add(f.value, v) end
    elseif CONTAINERS[c.tag] then
      if c.tag == "btdt" or c.tag == "bndt" then ctx.bone = {} end
      if c.tag == "sndt" then
        for _, s in ipairs(chunks(buf, c.voff, c.voff + c.len)) do
          local sn = node:add(f.chunk, buf(s.off, 8 + s.len), s.tag,
            string.format("%s (offset %d, length %d)", s.tag, s.off, s.len))
          if s.len > 0 then sn:add(f.value, buf(s.voff, s.len)) end
        end
      else
        show(buf, pinfo, node, c.voff, c.voff + c.len, c.tag, ctx)
      end
      if (c.tag == "btdt" or c.tag == "bndt") and ctx.bone.id then
        ctx.bones = ctx.bones + 1
        node:append_text(string.format(": %s", BONES[ctx.bone.id] or ("bone " .. ctx.bone.id)))
      end
    elseif c.tag == "ftyp" then
      node:add(f.ftyp, v)
    elseif c.tag == "vrsn" then
      node:add(f.vrsn, v)
    elseif c.tag == "ipad" then
      local packed = v:le_uint64()
      node:add_le(f.ipad_raw, v)
      local n = packed:tonumber()
      local a, b = math.floor(n / 1e9), math.floor(n / 1e6) % 1000
      local cc, d = math.floor(n / 1e3) % 1000, n % 1000
      if n < 256e9 and b < 256 and cc < 256 and d < 256 then
        node:add(f.ipad, v, Address.ip(string.format("%d.%d.%d.%d", a, b, cc, d)))
      end
    elseif c.tag == "rcvp" then
      node:add_le(f.rcvp, v)
    elseif c.tag == "fnum" then
      node:add_le(f.fnum, v)
      ctx.fnum = v:le_uint()
    elseif c.tag == "time" or c.tag == "uttm" then
      local x = v:le_float()
      local item = node:add(c.tag == "time" and f.time or f.uttm, v, x)
      if not finite(x) then
        item:add_proto_expert_info(e_odd, "clock value is not finite")
      elseif x < 0 then
        item:add_proto_expert_info(e_odd, "clock value is negative")
      end
    elseif c.tag == "tmcd" then
      node:add(f.tmcd_h, buf(c.voff, 1)); node:add(f.tmcd_m, buf(c.voff + 1, 1))
      node:add(f.tmcd_s, buf(c.voff + 2, 1)); node:add(f.tmcd_frame, buf(c.voff + 3, 1))
      node:add(f.tmcd_rate, buf(c.voff + 4, 1)); node:add(f.tmcd_drop, buf(c.voff + 5, 1))
    elseif c.tag == "bnid" then
      local id = v:le_uint()
      ctx.bone.id = id
      node:add_le(f.bone_id, v)
      node:add(f.bone_name, v, BONES[id] or "")
    elseif c.tag == "pbid" then
      node:add_le(f.bone_parent, v)
    elseif c.tag == "tran" then
      local q, ok = {}, true
      for i = 0, 6 do
        q[i] = buf(c.voff + 4 * i, 4):le_float()
        if not finite(q[i]) then ok = false end
      end
      local fields = { f.qx, f.qy, f.qz, f.qw, f.px, f.py, f.pz }
      for i = 0, 6 do node:add(fields[i + 1], buf(c.voff + 4 * i, 4), q[i]) end
      local norm = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
      if not ok then
        node:add_proto_expert_info(e_odd, "bone has a non-finite value")
      elseif math.abs(norm - 1) > 1e-3 then
        node:add_proto_expert_info(e_odd, "rotation is not a unit quaternion")
      end
    end
  end
end

function mocopi.dissector(buf, pinfo, tree)
  local len = buf:len()
  pinfo.cols.protocol = "mocopi"
  local root = tree:add(mocopi, buf(), "Sony mocopi (Sony Motion Format)")
  local ok, kind = pcall(validate, buf)
  if not ok then
    local e = kind
    if getmetatable(e) ~= Fail then
      -- A bug in this script: say so in the tree rather than as a Lua error.
      root:add_proto_expert_info(e_malformed, "dissector error: " .. tostring(e))
      return len
    end
    local text = string.format("%s at offset %d", e.reason, e.offset)
    if e.tag then text = text .. " in `" .. e.tag .. "`" end
    root:add_proto_expert_info(e_malformed, text)
    pinfo.cols.info = "malformed: " .. text
    return len
  end
  local ctx = { bones = 0, bone = {} }
  local shown, err = pcall(show, buf, pinfo, root, 0, len, "", ctx)
  if not shown then
    root:add_proto_expert_info(e_malformed, "dissector error: " .. tostring(err))
  end
  local names = { fram = "frame", skdf = "skeleton", sndt = "sensor" }
  root:add(f.kind, names[kind])
  if kind == "fram" then
    root:add(f.bones, ctx.bones)
    pinfo.cols.info = string.format("frame fnum=%d bones=%d", ctx.fnum or 0, ctx.bones)
  elseif kind == "skdf" then
    root:add(f.bones, ctx.bones)
    pinfo.cols.info = string.format("skeleton bones=%d", ctx.bones)
  else
    pinfo.cols.info = "sensor"
  end
  return len
end

-- Heuristic: a datagram that starts with a `head` chunk whose first child is `ftyp`.
local function heuristic(buf, pinfo, tree)
  if buf:len() < 16 then return false end
  if buf(4, 4):string() ~= "head" or buf(12, 4):string() ~= "ftyp" then return false end
  mocopi.dissector(buf, pinfo, tree)
  return true
end

-- Registered at load (so "Decode As" and tshark -d know it), and again
-- when the port preference changes.
local registered = 12351
DissectorTable.get("udp.port"):add(registered, mocopi)
function mocopi.init()
  local udp = DissectorTable.get("udp.port")
  if registered ~= prefs.port then
    udp:remove(registered, mocopi)
    registered = prefs.port
    udp:add(registered, mocopi)
  end
end
mocopi:register_heuristic("udp", heuristic)
