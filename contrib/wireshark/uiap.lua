-- UIAP (draft-white-zeroconf-uiap-00) for Wireshark and tshark: a Lua dissector.
--
-- Install: copy this file to ~/.local/lib/wireshark/plugins/ (or pass it once with
-- `tshark -X lua_script:contrib/wireshark/uiap.lua`). Display filter: `uiap`; every field is
-- `uiap.<name>` (`uiap.domain_id == "0fff:0000:0006:0000"`, `uiap.type == 1`,
-- `uiap.auth.key_id == 2`). It is registered on UDP ports 1021 and 1022, the claim and reply
-- ports uuidkit uses by default (RFC 4727 experiment values, UIAP §10); for other ports use
-- "Decode As..." or change the two port preferences.
--
-- Decoded: every field of the common format (UIAP §4.1), the Domain ID also in the text form
-- of §6.1, the UID space by its format (a unique UID, a prefix, or a range of two UIDs,
-- §3.2.2), and uuidkit's authentication trailer (48 octets after the message: Index, PC,
-- Key ID, HMAC-SHA256 MAC, marker 0xA7 0x01; docs/uiap.md). The MAC is shown, not checked:
-- checking it needs the site key.
--
-- tests/netns/test_dissector.py runs this file with tshark on captures of real daemons and
-- compares each field with what uuidkit.uiap.decode reads from the same datagram.

local uiap = Proto("uiap", "Unique Identifier Allocation Protocol")

local HEADER_OCTETS = 36
local TRAILER_OCTETS = 48
local MARKER = "a701"

local types = { [0] = "Claim-Attempt", [1] = "Claim-Deny" }
local formats = { [0] = "unique UID", [1] = "prefix", [2] = "range", [3] = "undefined" }

local f = uiap.fields
f.version = ProtoField.uint8("uiap.version", "Version", base.DEC)
f.type = ProtoField.uint8("uiap.type", "Type", base.DEC, types, 0xF0)
f.reserved_type = ProtoField.uint8("uiap.reserved_type_bits", "Reserved", base.HEX, nil, 0x0C)
f.x = ProtoField.bool("uiap.x", "X (proxy defense requested)", 8, nil, 0x02)
f.r = ProtoField.bool("uiap.r", "R (reclaim)", 8, nil, 0x01)
f.reserved_2 = ProtoField.uint8("uiap.reserved_2", "Reserved", base.HEX)
f.hop_limit = ProtoField.uint8("uiap.hop_limit", "Hop Limit", base.DEC)
f.lifetime = ProtoField.uint32("uiap.lifetime", "Lifetime (seconds)", base.DEC)
f.device_id = ProtoField.uint64("uiap.device_id", "Originating Device ID", base.HEX)
f.sequence = ProtoField.uint32("uiap.sequence", "Sequence Number", base.DEC)
f.claim_ref = ProtoField.uint32("uiap.claim_ref", "Claim Reference Number", base.DEC)
f.domain_id = ProtoField.string("uiap.domain_id", "Domain ID")
f.domain_raw = ProtoField.bytes("uiap.domain_id_octets", "Domain ID octets")
f.j = ProtoField.bool("uiap.j", "J (right justified)", 8, nil, 0x80)
f.domain_reserved = ProtoField.uint8("uiap.domain_reserved_flags", "Reserved flags", base.HEX,
    nil, 0x7F)
f.reserved_32 = ProtoField.uint8("uiap.reserved_32", "Reserved", base.HEX)
f.ba = ProtoField.uint8("uiap.ba", "BA (significant bits of the last octet, 0 = 8)", base.DEC,
    nil, 0xE0)
f.ba2 = ProtoField.uint8("uiap.ba2", "BA2", base.DEC, nil, 0x1C)
f.fmt = ProtoField.uint8("uiap.fmt", "Fmt", base.DEC, formats, 0x03)
f.uid_len = ProtoField.uint8("uiap.uid_len", "UID Len", base.DEC)
f.uid_len2 = ProtoField.uint8("uiap.uid_len2", "UID Len 2", base.DEC)
f.uid = ProtoField.bytes("uiap.uid", "UID")
f.uid2 = ProtoField.bytes("uiap.uid2", "UID 2")
f.space = ProtoField.string("uiap.space", "UID space")
f.auth = ProtoField.bytes("uiap.auth", "Authentication trailer")
f.auth_index = ProtoField.uint64("uiap.auth.index", "Index", base.HEX)
f.auth_pc = ProtoField.uint32("uiap.auth.pc", "PC (packet counter)", base.DEC)
f.auth_key_id = ProtoField.uint16("uiap.auth.key_id", "Key ID", base.DEC)
f.auth_mac = ProtoField.bytes("uiap.auth.mac", "MAC (HMAC-SHA256)")
f.auth_marker = ProtoField.bytes("uiap.auth.marker", "Trailer kind and version")
f.trailing = ProtoField.bytes("uiap.trailing", "Trailing octets")

local malformed = ProtoExpert.new("uiap.malformed", "Malformed UIAP datagram",
    expert.group.MALFORMED, expert.severity.ERROR)
uiap.experts = { malformed }

uiap.prefs.claim_port = Pref.uint("Claim port", 1021, "UDP port of Claim-Attempt floods")
uiap.prefs.reply_port = Pref.uint("Reply port", 1022, "UDP port of Claim-Deny replies")

-- The Domain ID in the text form of UIAP §6.1: four quads of four lower-case hex digits.
local function domain_text(range)
    local quads = {}
    for i = 0, 3 do
        quads[#quads + 1] = string.format("%04x", range(i * 2, 2):uint())
    end
    return table.concat(quads, ":")
end

local function hex(range)
    if range:len() == 0 then
        return ""
    end
    return string.lower(tostring(range:bytes()))
end

-- The UID space as text, by its format (UIAP §3.2.2).
local function space_text(fmt, uid, uid2)
    if fmt == 0 then
        return "uid " .. uid
    elseif fmt == 1 then
        return "prefix " .. uid
    elseif fmt == 2 then
        return "range " .. uid .. ".." .. uid2
    end
    return "undefined format"
end

local function dissect_trailer(buffer, offset, tree)
    local trailer = tree:add(f.auth, buffer(offset, TRAILER_OCTETS))
    trailer:set_text("Authentication trailer (uuidkit, RFC 8967 style)")
    trailer:add(f.auth_index, buffer(offset, 8))
    trailer:add(f.auth_pc, buffer(offset + 8, 4))
    trailer:add(f.auth_key_id, buffer(offset + 12, 2))
    trailer:add(f.auth_mac, buffer(offset + 14, 32))
    trailer:add(f.auth_marker, buffer(offset + 46, 2))
    return buffer(offset + 12, 2):uint()
end

function uiap.dissector(buffer, pinfo, tree)
    local length = buffer:len()
    if length == 0 then
        return 0
    end
    pinfo.cols.protocol = "UIAP"
    local root = tree:add(uiap, buffer(), "Unique Identifier Allocation Protocol")
    root:add(f.version, buffer(0, 1))
    if length < HEADER_OCTETS then
        root:add_proto_expert_info(malformed, "shorter than the 36-octet header (UIAP §4.1)")
        pinfo.cols.info = "UIAP, truncated"
        return length
    end
    local type_octet = buffer(1, 1)
    root:add(f.type, type_octet)
    root:add(f.reserved_type, type_octet)
    root:add(f.x, type_octet)
    root:add(f.r, type_octet)
    root:add(f.reserved_2, buffer(2, 1))
    root:add(f.hop_limit, buffer(3, 1))
    root:add(f.lifetime, buffer(4, 4))
    root:add(f.device_id, buffer(8, 8))
    root:add(f.sequence, buffer(16, 4))
    root:add(f.claim_ref, buffer(20, 4))
    local domain = domain_text(buffer(24, 8))
    local domain_item = root:add(f.domain_id, buffer(24, 8), domain)
    domain_item:add(f.domain_raw, buffer(24, 8))
    domain_item:add(f.j, buffer(31, 1))
    domain_item:add(f.domain_reserved, buffer(31, 1))
    root:add(f.reserved_32, buffer(32, 1))
    local format_octet = buffer(33, 1)
    root:add(f.ba, format_octet)
    root:add(f.ba2, format_octet)
    root:add(f.fmt, format_octet)
    root:add(f.uid_len, buffer(34, 1))
    root:add(f.uid_len2, buffer(35, 1))

    local fmt = format_octet:uint() % 4
    local uid_len = buffer(34, 1):uint()
    local uid_len2 = 0
    if fmt == 2 then
        uid_len2 = buffer(35, 1):uint() -- UID Len 2 is ignored unless a range (§4.1)
    end
    local message_end = HEADER_OCTETS + uid_len + uid_len2
    if length < message_end then
        root:add_proto_expert_info(malformed, "shorter than its UID Len fields say (UIAP §4.1)")
        pinfo.cols.info = "UIAP, truncated"
        return length
    end
    local uid = hex(buffer(HEADER_OCTETS, uid_len))
    root:add(f.uid, buffer(HEADER_OCTETS, uid_len))
    local uid2 = ""
    if fmt == 2 then
        uid2 = hex(buffer(HEADER_OCTETS + uid_len, uid_len2))
        root:add(f.uid2, buffer(HEADER_OCTETS + uid_len, uid_len2))
    end
    local space = space_text(fmt, uid, uid2)
    root:add(f.space, buffer(HEADER_OCTETS, uid_len + uid_len2), space)

    local rest = length - message_end
    local sealed = ""
    if rest == TRAILER_OCTETS and hex(buffer(length - 2, 2)) == MARKER then
        sealed = string.format(", key %d", dissect_trailer(buffer, message_end, root))
    elseif rest > 0 then
        root:add(f.trailing, buffer(message_end, rest))
        root:add_proto_expert_info(malformed, "octets after the UIDs that are not a trailer")
    end
    local name = types[type_octet:uint() / 16 - (type_octet:uint() / 16) % 1] or "unknown type"
    pinfo.cols.info = string.format("UIAP %s%s%s, %s, %s, hop limit %d%s", name,
        (type_octet:uint() % 4 >= 2) and " X" or "", (type_octet:uint() % 2 == 1) and " R" or "",
        domain, space, buffer(3, 1):uint(), sealed)
    return length
end

local udp_port = DissectorTable.get("udp.port")
local registered = {}

local function register_ports()
    for _, port in ipairs(registered) do
        udp_port:remove(port, uiap)
    end
    registered = { uiap.prefs.claim_port, uiap.prefs.reply_port }
    for _, port in ipairs(registered) do
        udp_port:add(port, uiap)
    end
end

function uiap.prefs_changed()
    register_ports()
end

register_ports()
