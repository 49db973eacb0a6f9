#include "services/proxy/route_table.h"

#include <gtest/gtest.h>

namespace gpuaas::proxy {
namespace {

namespace instancepb = ::gpuaas::instance::v1;

instancepb::InstanceChange Upsert(const std::string& id, instancepb::State state) {
  instancepb::InstanceChange c;
  c.set_type(instancepb::InstanceChange::TYPE_UPSERTED);
  instancepb::Instance* i = c.mutable_instance();
  i->set_instance_id(id);
  i->set_tenant_id("ten-a");
  i->set_state(state);
  instancepb::Port* web = i->mutable_template_()->add_ports();
  web->set_port(8080);
  web->set_is_public(true);
  web->set_base_url("/lab");
  instancepb::Port* tcp = i->mutable_template_()->add_ports();
  tcp->set_port(22);
  tcp->set_protocol(instancepb::PROTOCOL_TCP);
  instancepb::Port* unmapped = i->mutable_template_()->add_ports();
  unmapped->set_port(9000);
  for (int port : {8080, 22}) {
    instancepb::PortMapping* m = i->add_ports();
    m->set_port(port);
    m->set_host("127.0.0.1");
    m->set_host_port(20000 + port % 1000);
  }
  return c;
}

TEST(RouteTable, RoutesOnlyMappedHttpPortsOfReadyOrRunningInstances) {
  RouteTable t;
  EXPECT_FALSE(t.synced());
  t.Apply(Upsert("web-1", instancepb::STATE_RUNNING));
  std::optional<PortRoute> r = t.Find("web-1", 8080);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->tenant_id, "ten-a");
  EXPECT_TRUE(r->is_public);
  EXPECT_EQ(r->base_url, "/lab");
  EXPECT_EQ(r->host, "127.0.0.1");
  EXPECT_EQ(r->host_port, 20080);
  EXPECT_FALSE(t.Find("web-1", 22).has_value());    // TCP
  EXPECT_FALSE(t.Find("web-1", 9000).has_value());  // no mapping
  EXPECT_FALSE(t.Find("web-2", 8080).has_value());

  t.Apply(Upsert("web-1", instancepb::STATE_STOPPING));
  EXPECT_FALSE(t.Find("web-1", 8080).has_value());
  t.Apply(Upsert("web-1", instancepb::STATE_READY));
  EXPECT_TRUE(t.Find("web-1", 8080).has_value());

  instancepb::InstanceChange del;
  del.set_type(instancepb::InstanceChange::TYPE_DELETED);
  del.mutable_instance()->set_instance_id("web-1");
  t.Apply(del);
  EXPECT_FALSE(t.Find("web-1", 8080).has_value());

  instancepb::InstanceChange synced;
  synced.set_type(instancepb::InstanceChange::TYPE_SYNCED);
  t.Apply(synced);
  EXPECT_TRUE(t.synced());
}

TEST(RouteTable, KeepsEachRoutedInstancesProxyToken) {
  RouteTable t;
  EXPECT_TRUE(RouteTable::Routes(Upsert("web-1", instancepb::STATE_RUNNING).instance()));
  EXPECT_FALSE(RouteTable::Routes(Upsert("web-1", instancepb::STATE_STOPPED).instance()));
  t.Apply(Upsert("web-1", instancepb::STATE_RUNNING), "tok-1");
  EXPECT_EQ(t.Find("web-1", 8080)->proxy_token, "tok-1");
  EXPECT_EQ(t.ProxyTokenOf("web-1"), "tok-1");
  t.Apply(Upsert("web-1", instancepb::STATE_STOPPED));
  EXPECT_EQ(t.ProxyTokenOf("web-1"), "") << "forgotten with its routes";
  t.Replace({Upsert("web-2", instancepb::STATE_RUNNING).instance()}, {{"web-2", "tok-2"}});
  EXPECT_EQ(t.Find("web-2", 8080)->proxy_token, "tok-2");
}

TEST(RouteTable, ReplaceForgetsWhatTheListLacks) {
  RouteTable t;
  t.Apply(Upsert("old-1", instancepb::STATE_RUNNING));
  t.Replace({Upsert("new-1", instancepb::STATE_RUNNING).instance()});
  EXPECT_FALSE(t.Find("old-1", 8080).has_value());
  EXPECT_TRUE(t.Find("new-1", 8080).has_value());
  EXPECT_EQ(t.size(), 1u);
}

}  // namespace
}  // namespace gpuaas::proxy
